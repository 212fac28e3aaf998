/**
 * The reviewer's Prometheus metrics: calls by stage, verdict and failure, tokens by kind, and the
 * latency histogram, on the app's registry.
 */
import { describe, expect, it } from "vitest";
import { createMetrics } from "../../src/ops/metrics.js";
import { reviewerMetrics } from "../../src/ops/reviewer-metrics.js";

describe("reviewer metrics", () => {
  it("count calls, verdicts and tokens on /metrics", async () => {
    const metrics = createMetrics({ processMetrics: false });
    const observe = reviewerMetrics(metrics.registry);
    observe({ verdict: "allow", reason: "ok", tokensIn: 500, tokensOut: 20, latencyMs: 120 }, "live");
    observe(
      { verdict: "unsure", reason: "late", tokensIn: 0, tokensOut: 0, latencyMs: 20_000, failure: "timeout" },
      "shadow",
    );
    const text = await metrics.render();
    expect(text).toContain('coworker_reviewer_calls_total{stage="live",verdict="allow",failure="none"} 1');
    expect(text).toContain(
      'coworker_reviewer_calls_total{stage="shadow",verdict="unsure",failure="timeout"} 1',
    );
    expect(text).toContain('coworker_reviewer_tokens_total{kind="prompt"} 500');
    expect(text).toContain('coworker_reviewer_tokens_total{kind="completion"} 20');
    expect(text).toContain('coworker_reviewer_duration_seconds_count{stage="live"} 1');
  });
});
