/**
 * NativeOps: the ordered queue of what a turn still has to send to its native stream — answer
 * text, task cards for tool calls and plan steps, notes — drained in order on each flush, with
 * neighbouring text merged into one append. Answer text goes out with its spoofing links rewritten
 * (StreamedLinks, which may hold back a link not yet whole: it goes out before anything else is
 * queued) and its mention syntax made inert. It remembers how the stream ended, if it did.
 */
import type { types } from "@slack/bolt";
import type { PlanStep } from "../../core/events.js";
import { formatDuration } from "../../core/duration-text.js";
import { TOOL_OUTCOME_WORDS } from "../shared/tool-line-format.js";
import { toolLabel } from "../shared/tool-line-label.js";
import { defuseMentions } from "./slack-markdown.js";
import { StreamedLinks } from "./slack-stream-links.js";
import type { ToolLineState } from "./slack-status-lines.js";
import type { NativeStream, StreamResult } from "./slack-stream.js";

type Op =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "task"; readonly chunk: types.TaskUpdateChunk };

const PLAN_STATUS: Readonly<Record<PlanStep["status"], types.TaskUpdateChunk["status"]>> = {
  pending: "pending",
  in_progress: "in_progress",
  done: "complete",
};

/** The task card of one tool call. */
export function toolTask(state: ToolLineState): types.TaskUpdateChunk {
  const base = { type: "task_update" as const, id: state.callId, title: toolLabel(state) };
  if (state.waiting === "approval") return { ...base, status: "pending", details: "waiting for approval" };
  if (state.waiting === "answer") return { ...base, status: "pending", details: "waiting for your answer" };
  const took = state.durationMs !== undefined ? formatDuration(state.durationMs) : undefined;
  const okDetails = [took, state.clearedBy].filter((part) => part !== undefined).join(" · ");
  switch (state.status) {
    case "running":
      return state.clearedBy
        ? { ...base, status: "in_progress", details: state.clearedBy }
        : { ...base, status: "in_progress" };
    case "ok":
      return okDetails
        ? { ...base, status: "complete", details: okDetails }
        : { ...base, status: "complete" };
    case "error":
      return took ? { ...base, status: "error", details: took } : { ...base, status: "error" };
    case "denied":
    case "interrupted":
    case "not_started":
      return { ...base, status: "error", details: TOOL_OUTCOME_WORDS[state.status] };
  }
}

export class NativeOps {
  private ops: Op[] = [];
  private streamedSinceDone = false;
  private lastWasText = false;
  private wroteAny = false;
  /** The last queued text ended with `<`, which the next may continue into a mention. */
  private textEndsWithOpener = false;
  private readonly links = new StreamedLinks();
  /** How the stream ended, once it did ("ok" never ends it). */
  result: StreamResult | undefined;

  constructor(readonly stream: NativeStream) {}

  /** Whether the stream can no longer be used. */
  get ended(): boolean {
    return this.result !== undefined && this.result !== "ok";
  }

  /** Record an external failure (e.g. of the final stop). */
  fail(result: StreamResult): void {
    this.result = result;
  }

  /** Queue answer text (its links checked: see StreamedLinks; its mentions inert: defuseMentions). */
  text(delta: string): void {
    if (delta.length === 0) return;
    if (!this.lastWasText && this.wroteAny) this.ops.push({ kind: "text", text: "\n\n" });
    this.queueText(this.links.push(delta));
    this.streamedSinceDone = true;
    this.lastWasText = true;
    this.wroteAny = true;
  }

  /** Queue checked answer text, its mention syntax made inert (also across pieces). */
  private queueText(text: string): void {
    if (text.length === 0) return;
    this.ops.push({ kind: "text", text: defuseMentions(text, this.lastWasText && this.textEndsWithOpener) });
    this.textEndsWithOpener = text.endsWith("<");
  }

  /** Queue the answer text held back for a link that may not be whole (before anything else). */
  private release(): void {
    this.queueText(this.links.end());
  }

  /** An assistant message ended; if none of it was streamed (no deltas), send it whole. */
  messageDone(content: string): void {
    if (!this.streamedSinceDone && content.trim().length > 0) this.text(content);
    this.release();
    this.streamedSinceDone = false;
    this.lastWasText = false;
  }

  tool(state: ToolLineState): void {
    this.release();
    this.ops.push({ kind: "task", chunk: toolTask(state) });
    this.lastWasText = false;
  }

  plan(steps: readonly PlanStep[]): void {
    this.release();
    steps.forEach((step, index) => {
      this.ops.push({
        kind: "task",
        chunk: {
          type: "task_update",
          id: `plan-${index}`,
          title: step.title,
          status: PLAN_STATUS[step.status],
        },
      });
    });
    this.lastWasText = false;
  }

  /** Queue a note (streamNoteLine: unescaped, as `text` makes its mentions inert) as a quote. */
  note(line: string): void {
    this.text(`> ${line}`);
    this.release();
    this.lastWasText = false;
  }

  /** Send everything queued, in order; unless final, also flush text the helper still buffers. */
  async drain(final: boolean): Promise<void> {
    if (final) this.release();
    while (this.ops.length > 0 && !this.ended) {
      const first = this.ops[0] as Op;
      let run = 1;
      while (run < this.ops.length && (this.ops[run] as Op).kind === first.kind) run += 1;
      const batch = this.ops.splice(0, run);
      this.result =
        first.kind === "text"
          ? await this.stream.appendText(batch.map((op) => (op.kind === "text" ? op.text : "")).join(""))
          : await this.stream.tasks(batch.flatMap((op) => (op.kind === "task" ? [op.chunk] : [])));
    }
    if (!final && !this.ended) this.result = await this.stream.flush();
  }
}
