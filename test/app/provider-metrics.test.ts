import { describe, expect, it } from "vitest";
import { MeteredProvider } from "../../src/app/provider-metrics.js";
import { ProviderError, type ProviderRequest } from "../../src/engine/provider/provider.js";
import { createMetrics } from "../../src/ops/metrics.js";
import { ScriptedProvider, type ScriptedStep, textStep, toolStep } from "../support/scripted-provider.js";
import { sample } from "./run-coworker.js";

/** A clock that advances 10 ms on every reading. */
function steppingClock(): () => number {
  let now = 0;
  return () => {
    now += 10;
    return now;
  };
}

function setup(steps: ScriptedStep[]) {
  const metrics = createMetrics({ processMetrics: false });
  const provider = new MeteredProvider(new ScriptedProvider(steps), metrics, steppingClock());
  return { metrics, provider };
}

const request = (signal?: AbortSignal): ProviderRequest => ({
  model: "m1",
  messages: [{ role: "user", content: "hi" }],
  tools: [],
  ...(signal ? { signal } : {}),
});

async function drain(stream: AsyncIterable<unknown>): Promise<unknown[]> {
  const events: unknown[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

describe("MeteredProvider", () => {
  it("passes events through and records latency, first-token latency, outcome and usage", async () => {
    const usage = { inputTokens: 12, outputTokens: 5, totalTokens: 17 };
    const { metrics, provider } = setup([{ ...textStep("Hel", "lo"), usage }]);
    const events = await drain(provider.stream(request()));
    expect(events.map((e) => (e as { type: string }).type)).toEqual([
      "text-delta",
      "text-delta",
      "step-finished",
    ]);
    const text = await metrics.render();
    // start at 10, first token read at 20, end at 30.
    expect(sample(text, "coworker_model_request_duration_seconds_sum", { model: "m1", outcome: "ok" })).toBe(
      0.02,
    );
    expect(sample(text, "coworker_model_first_token_seconds_sum", { model: "m1" })).toBe(0.01);
    expect(sample(text, "coworker_model_tokens_total", { model: "m1", kind: "prompt" })).toBe(12);
    expect(sample(text, "coworker_model_tokens_total", { model: "m1", kind: "completion" })).toBe(5);
  });

  it("records no first token for a step with only tool calls, and no tokens without usage", async () => {
    const { metrics, provider } = setup([toolStep(["c1", "read_file", { path: "a" }])]);
    await drain(provider.stream(request()));
    const text = await metrics.render();
    expect(
      sample(text, "coworker_model_request_duration_seconds_count", { model: "m1", outcome: "ok" }),
    ).toBe(1);
    expect(sample(text, "coworker_model_first_token_seconds_count", { model: "m1" })).toBeUndefined();
    expect(sample(text, "coworker_model_tokens_total", { model: "m1", kind: "prompt" })).toBeUndefined();
  });

  it("counts a failure as an error outcome and a model error, and rethrows it unchanged", async () => {
    const failure = new ProviderError("server", "The model server failed (500).", 500);
    const { metrics, provider } = setup([{ text: ["partial"], error: failure }]);
    await expect(drain(provider.stream(request()))).rejects.toBe(failure);
    const text = await metrics.render();
    expect(
      sample(text, "coworker_model_request_duration_seconds_count", { model: "m1", outcome: "error" }),
    ).toBe(1);
    expect(sample(text, "coworker_errors_total", { area: "model" })).toBe(1);
  });

  it("counts an aborted request and a consumer that stops early as interrupted, not as errors", async () => {
    const { metrics, provider } = setup([{ text: ["a"], hang: true }, textStep("x", "y")]);
    const controller = new AbortController();
    const aborted = drain(provider.stream(request(controller.signal)));
    controller.abort();
    await expect(aborted).rejects.toMatchObject({ kind: "aborted" });
    for await (const _ of provider.stream(request())) break;
    const text = await metrics.render();
    expect(
      sample(text, "coworker_model_request_duration_seconds_count", { model: "m1", outcome: "interrupted" }),
    ).toBe(2);
    expect(sample(text, "coworker_errors_total", { area: "model" })).toBeUndefined();
  });
});
