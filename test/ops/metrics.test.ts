/**
 * Metrics: a process label, once set, is on every series, so several processes' metrics stay
 * apart; an unchanged rendering is reused, so /metrics requests cannot hold the event loop.
 */
import { describe, expect, it, vi } from "vitest";
import { createMetrics } from "../../src/ops/metrics.js";

describe("metrics process label", () => {
  it("labels every series with the process when one is given, and none otherwise", async () => {
    const labelled = createMetrics({ processMetrics: false });
    labelled.labelProcess("replica-2");
    labelled.turnStarted("slack");
    labelled.messageReceived("slack", "started");
    const text = await labelled.render();
    expect(text).toContain('coworker_turns_running{platform="slack",process="replica-2"} 1');
    expect(text).toContain(
      'coworker_inbound_messages_total{platform="slack",result="started",process="replica-2"} 1',
    );

    const plain = createMetrics({ processMetrics: false });
    plain.turnStarted("slack");
    expect(await plain.render()).toContain('coworker_turns_running{platform="slack"} 1');
  });
});

describe("metrics rendering", () => {
  it("renders once for many requests while nothing changes, and afresh once something is recorded", async () => {
    // At the label budget one rendering took ~8 ms: 130 strangers' requests a second held the event loop.
    const metrics = createMetrics({ processMetrics: false });
    const renders = vi.spyOn(metrics.registry, "metrics");
    metrics.toolCallFinished("read_file", "ok", 5);
    const texts = await Promise.all(Array.from({ length: 50 }, () => metrics.render()));
    for (let i = 0; i < 50; i++) await metrics.render();
    expect(renders).toHaveBeenCalledTimes(1);
    expect(new Set(texts).size).toBe(1);
    metrics.toolCallFinished("read_file", "ok", 5);
    expect(await metrics.render()).toContain('coworker_tool_calls_total{tool="read_file",status="ok"} 2');
    expect(renders).toHaveBeenCalledTimes(2);
  });

  it("renders at most 10 times a second however often something is recorded between requests", async () => {
    const metrics = createMetrics({ processMetrics: false });
    const renders = vi.spyOn(metrics.registry, "metrics");
    for (let i = 0; i < 50; i++) {
      metrics.toolCallFinished("read_file", "ok", 5);
      await metrics.render();
    }
    expect(renders).toHaveBeenCalledTimes(10);
  });
});
