/**
 * Prometheus metrics (prom-client) behind a small typed API that the engine, sessions, approvals
 * and channels call. Each `createMetrics()` owns its own registry, so tests and several app
 * instances in one process never collide. Label values that come from outside the code (tool
 * names, model names) are bounded: a value that is not a short plain name is `unknown`, and past
 * a fixed number of distinct values per label new ones become `other`, so no input can grow the
 * series without limit. `/metrics` needs no credentials, and one rendering at the label budget
 * (200 tools' histograms) takes about 8 ms of the event loop, so some 130 requests a second from a
 * stranger held it whole and every chat waited: a rendering is served again for up to
 * RENDER_REUSE_MS while nothing was recorded through this API, and however much was, at most
 * RENDERS_PER_SECOND are made in any second (a busy bot records between any two requests). What
 * is recorded on the registry directly (the reviewer's metrics) and the process metrics may be a
 * second older.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { ToolCallStatus, TurnStatus } from "../core/events.js";

/** The outcome of one model request. */
export type ModelOutcome = "ok" | "error" | "interrupted";

export interface Metrics {
  /** The registry behind `/metrics` (for adding app-specific collectors). */
  readonly registry: Registry;
  /** Put a `process` label on every series (several processes share a deployment). */
  labelProcess(processId: string): void;
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
  /** The exposition text for `/metrics` (one may be served again for up to a second: see the module header). */
  render(): Promise<string>;
  /** The Content-Type header for `render()`'s text. */
  readonly contentType: string;
}

export interface MetricsOptions {
  /** Also collect Node process metrics (CPU, memory, event-loop lag); default true. */
  readonly processMetrics?: boolean;
}

/** The label of a value that is not a name we report (e.g. a tool the model made up). */
export const UNKNOWN_LABEL = "unknown";
/** The label of a value past the per-label budget. */
export const OTHER_LABEL = "other";
const LABEL_PATTERN = /^[A-Za-z0-9][\w.:/-]{0,79}$/;
const DISTINCT_LABELS = 200;

/** Bounds one label's values (see the module header). */
function boundedLabel(): (value: string) => string {
  const seen = new Set<string>();
  return (value) => {
    if (!LABEL_PATTERN.test(value)) return UNKNOWN_LABEL;
    if (seen.has(value)) return value;
    if (seen.size >= DISTINCT_LABELS) return OTHER_LABEL;
    seen.add(value);
    return value;
  };
}

const SECONDS = 1000;
/** How long an unchanged rendering is served again (Prometheus scrapes every 15 s or so). */
const RENDER_REUSE_MS = 1_000;
/** Renderings made in any one second at most, whatever changed (about 8% of the event loop at worst). */
const RENDERS_PER_SECOND = 10;
const TURN_BUCKETS = [0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900];
const TOOL_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 120, 600];
const MODEL_BUCKETS = [0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 60];

/** Create the metric set on a fresh registry. */
export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  if (options.processMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: "coworker_" });
  const registers = [registry];
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
    new Counter<L>({ name, help, labelNames, registers });
  const gauge = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
    new Gauge<L>({ name, help, labelNames, registers });
  const histogram = <L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    buckets: number[],
  ) => new Histogram<L>({ name, help, labelNames, buckets, registers });

  const turnsRunning = gauge("coworker_turns_running", "Turns currently running", ["platform"]);
  const turns = counter("coworker_turns_total", "Finished turns by platform and status", [
    "platform",
    "status",
  ]);
  const turnDuration = histogram(
    "coworker_turn_duration_seconds",
    "Wall time of a turn",
    ["platform"],
    TURN_BUCKETS,
  );
  const toolCalls = counter("coworker_tool_calls_total", "Tool calls by tool and status", ["tool", "status"]);
  const toolDuration = histogram(
    "coworker_tool_call_duration_seconds",
    "Wall time of a tool call",
    ["tool"],
    TOOL_BUCKETS,
  );
  const approvalsPending = gauge("coworker_approvals_pending", "Approval cards waiting for a decision", [
    "platform",
  ]);
  const approvals = counter("coworker_approvals_resolved_total", "Approval decisions by outcome", [
    "platform",
    "outcome",
  ]);
  const modelLatency = histogram(
    "coworker_model_request_duration_seconds",
    "Wall time of a model request, from send to end of stream",
    ["model", "outcome"],
    MODEL_BUCKETS,
  );
  const firstToken = histogram(
    "coworker_model_first_token_seconds",
    "Time from sending a model request to its first streamed token",
    ["model"],
    MODEL_BUCKETS,
  );
  const tokens = counter("coworker_model_tokens_total", "Tokens reported by the model provider", [
    "model",
    "kind",
  ]);
  const messages = counter("coworker_inbound_messages_total", "Inbound messages by platform and result", [
    "platform",
    "result",
  ]);
  const errors = counter("coworker_errors_total", "Errors by area", ["area"]);

  const toolLabel = boundedLabel();
  const modelLabel = boundedLabel();

  /** The last rendering, whether anything was recorded since, and when the last second's were made. */
  let rendered: { readonly at: number; readonly text: Promise<string> } | undefined;
  let changed = false;
  const renderTimes: number[] = [];
  const recording =
    <A extends unknown[]>(record: (...args: A) => void) =>
    (...args: A): void => {
      changed = true;
      record(...args);
    };
  const render = (): Promise<string> => {
    const now = performance.now();
    while (renderTimes.length > 0 && now - (renderTimes[0] ?? now) >= SECONDS) renderTimes.shift();
    const fresh = !changed && now - (rendered?.at ?? Number.NEGATIVE_INFINITY) < RENDER_REUSE_MS;
    if (rendered !== undefined && (fresh || renderTimes.length >= RENDERS_PER_SECOND)) return rendered.text;
    changed = false;
    renderTimes.push(now);
    const text = registry.metrics();
    const made = { at: now, text };
    rendered = made;
    text.catch(() => {
      if (rendered === made) rendered = undefined;
    });
    return text;
  };

  return {
    registry,
    labelProcess: recording((processId: string) => registry.setDefaultLabels({ process: processId })),
    contentType: registry.contentType,
    turnStarted: recording((platform: string) => turnsRunning.inc({ platform })),
    turnFinished: recording((platform: string, status: TurnStatus, durationMs: number) => {
      turnsRunning.dec({ platform });
      turns.inc({ platform, status });
      turnDuration.observe({ platform }, durationMs / SECONDS);
    }),
    toolCallFinished: recording((name: string, status: ToolCallStatus, durationMs: number) => {
      const tool = toolLabel(name);
      toolCalls.inc({ tool, status });
      toolDuration.observe({ tool }, durationMs / SECONDS);
    }),
    approvalRequested: recording((platform: string) => approvalsPending.inc({ platform })),
    approvalResolved: recording((platform: string, outcome: string) => {
      approvalsPending.dec({ platform });
      approvals.inc({ platform, outcome });
    }),
    setApprovalsPending: recording((platform: string, count: number) =>
      approvalsPending.set({ platform }, count),
    ),
    modelRequestFinished: recording(
      (name: string, outcome: ModelOutcome, durationMs: number, firstTokenMs?: number) => {
        const model = modelLabel(name);
        modelLatency.observe({ model, outcome }, durationMs / SECONDS);
        if (firstTokenMs !== undefined) firstToken.observe({ model }, firstTokenMs / SECONDS);
      },
    ),
    tokensUsed: recording((model: string, kind: "prompt" | "completion", count: number) =>
      tokens.inc({ model: modelLabel(model), kind }, count),
    ),
    messageReceived: recording((platform: string, result: string) => messages.inc({ platform, result })),
    error: recording((area: string) => errors.inc({ area })),
    render,
  };
}
