/**
 * The safety reviewer's Prometheus metrics, added to the app's registry: reviewer calls by stage
 * (live / shadow) and verdict, reviewer tokens in and out, and the latency of a review. The
 * returned observer is what the Reviewer reports each verdict to.
 */
import { Counter, Histogram, type Registry } from "prom-client";
import type { ReviewStage } from "../engine/reviewer/reviewer.js";
import type { ReviewerVerdict } from "../engine/reviewer/verdict.js";

const LATENCY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 60];

/** Register the reviewer metrics on `registry`; returns the verdict observer. */
export function reviewerMetrics(registry: Registry): (verdict: ReviewerVerdict, stage: ReviewStage) => void {
  const registers = [registry];
  const calls = new Counter({
    name: "coworker_reviewer_calls_total",
    help: "Safety reviewer calls by stage and verdict (failures count as unsure)",
    labelNames: ["stage", "verdict", "failure"] as const,
    registers,
  });
  const tokens = new Counter({
    name: "coworker_reviewer_tokens_total",
    help: "Tokens spent on safety reviewer calls",
    labelNames: ["kind"] as const,
    registers,
  });
  const latency = new Histogram({
    name: "coworker_reviewer_duration_seconds",
    help: "Wall time of a safety reviewer call",
    labelNames: ["stage"] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  return (verdict, stage) => {
    calls.inc({ stage, verdict: verdict.verdict, failure: verdict.failure ?? "none" });
    tokens.inc({ kind: "prompt" }, verdict.tokensIn);
    tokens.inc({ kind: "completion" }, verdict.tokensOut);
    latency.observe({ stage }, verdict.latencyMs / 1000);
  };
}
