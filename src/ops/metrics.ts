/**
 * Prometheus metrics (prom-client) behind a small typed API that the engine, sessions, approvals
 * and channels call. Each `createMetrics()` owns its own registry, so tests and several app
 * instances in one process never collide.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { ToolCallStatus, TurnStatus } from "../engine/events.js";

/** The outcome of one model request. */
export type ModelOutcome = "ok" | "error" | "interrupted";

export interface Metrics {
  /** The registry behind `/metrics` (for adding app-specific collectors). */
  readonly registry: Registry;
  /** A turn began on `platform`; pair with `turnFinished`. */
  turnStarted(platform: string): void;
  /** A turn ended with `status` after `durationMs`. */
  turnFinished(platform: string, status: TurnStatus, durationMs: number): void;
  /** A tool call ended (any status) after `durationMs`. */
  toolCallFinished(tool: string, status: ToolCallStatus, durationMs: number): void;
  /** An approval card was posted; pair with `approvalResolved`. */
  approvalRequested(platform: string): void;
  /** A pending approval was decided ("once", "deny", "expired", …). */
  approvalResolved(platform: string, outcome: string): void;
  /** Set the pending-approvals gauge outright (after loading pending items at startup). */
  setApprovalsPending(platform: string, count: number): void;
  /** A model request ended; `firstTokenMs` when a first token arrived. */
  modelRequestFinished(model: string, outcome: ModelOutcome, durationMs: number, firstTokenMs?: number): void;
  /** Tokens reported by the provider's usage. */
  tokensUsed(model: string, kind: "prompt" | "completion", count: number): void;
  /** An inbound message and what became of it (`started`, `queued`, `duplicate`, `ignored`, …). */
  messageReceived(platform: string, result: string): void;
  /** An error worth counting; `area` is a short fixed name: "model", "tool", "slack", "store", … */
  error(area: string): void;
  /** The exposition text for `/metrics`. */
  render(): Promise<string>;
  /** The Content-Type header for `render()`'s text. */
  readonly contentType: string;
}

export interface MetricsOptions {
  /** Also collect Node process metrics (CPU, memory, event-loop lag); default true. */
  readonly processMetrics?: boolean;
}

const SECONDS = 1000;
const TURN_BUCKETS = [0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900];
const TOOL_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 120, 600];
const MODEL_BUCKETS = [0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 60];

/** Create the metric set on a fresh registry. */
export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  if (options.processMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: "coworker_" });
  const registers = [registry];

  const turnsRunning = new Gauge({
    name: "coworker_turns_running",
    help: "Turns currently running",
    labelNames: ["platform"] as const,
    registers,
  });
  const turns = new Counter({
    name: "coworker_turns_total",
    help: "Finished turns by platform and status",
    labelNames: ["platform", "status"] as const,
    registers,
  });
  const turnDuration = new Histogram({
    name: "coworker_turn_duration_seconds",
    help: "Wall time of a turn",
    labelNames: ["platform"] as const,
    buckets: TURN_BUCKETS,
    registers,
  });
  const toolCalls = new Counter({
    name: "coworker_tool_calls_total",
    help: "Tool calls by tool and status",
    labelNames: ["tool", "status"] as const,
    registers,
  });
  const toolDuration = new Histogram({
    name: "coworker_tool_call_duration_seconds",
    help: "Wall time of a tool call",
    labelNames: ["tool"] as const,
    buckets: TOOL_BUCKETS,
    registers,
  });
  const approvalsPending = new Gauge({
    name: "coworker_approvals_pending",
    help: "Approval cards waiting for a decision",
    labelNames: ["platform"] as const,
    registers,
  });
  const approvals = new Counter({
    name: "coworker_approvals_resolved_total",
    help: "Approval decisions by outcome",
    labelNames: ["platform", "outcome"] as const,
    registers,
  });
  const modelLatency = new Histogram({
    name: "coworker_model_request_duration_seconds",
    help: "Wall time of a model request, from send to end of stream",
    labelNames: ["model", "outcome"] as const,
    buckets: MODEL_BUCKETS,
    registers,
  });
  const firstToken = new Histogram({
    name: "coworker_model_first_token_seconds",
    help: "Time from sending a model request to its first streamed token",
    labelNames: ["model"] as const,
    buckets: MODEL_BUCKETS,
    registers,
  });
  const tokens = new Counter({
    name: "coworker_model_tokens_total",
    help: "Tokens reported by the model provider",
    labelNames: ["model", "kind"] as const,
    registers,
  });
  const messages = new Counter({
    name: "coworker_inbound_messages_total",
    help: "Inbound messages by platform and result",
    labelNames: ["platform", "result"] as const,
    registers,
  });
  const errors = new Counter({
    name: "coworker_errors_total",
    help: "Errors by area",
    labelNames: ["area"] as const,
    registers,
  });

  return {
    registry,
    contentType: registry.contentType,
    turnStarted: (platform) => turnsRunning.inc({ platform }),
    turnFinished: (platform, status, durationMs) => {
      turnsRunning.dec({ platform });
      turns.inc({ platform, status });
      turnDuration.observe({ platform }, durationMs / SECONDS);
    },
    toolCallFinished: (tool, status, durationMs) => {
      toolCalls.inc({ tool, status });
      toolDuration.observe({ tool }, durationMs / SECONDS);
    },
    approvalRequested: (platform) => approvalsPending.inc({ platform }),
    approvalResolved: (platform, outcome) => {
      approvalsPending.dec({ platform });
      approvals.inc({ platform, outcome });
    },
    setApprovalsPending: (platform, count) => approvalsPending.set({ platform }, count),
    modelRequestFinished: (model, outcome, durationMs, firstTokenMs) => {
      modelLatency.observe({ model, outcome }, durationMs / SECONDS);
      if (firstTokenMs !== undefined) firstToken.observe({ model }, firstTokenMs / SECONDS);
    },
    tokensUsed: (model, kind, count) => tokens.inc({ model, kind }, count),
    messageReceived: (platform, result) => messages.inc({ platform, result }),
    error: (area) => errors.inc({ area }),
    render: () => registry.metrics(),
  };
}
