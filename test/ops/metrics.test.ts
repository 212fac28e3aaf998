/** Metrics: a process label, once set, is on every series, so several processes' metrics stay apart. */
import { describe, expect, it } from "vitest";
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
