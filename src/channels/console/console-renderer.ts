/**
 * Renders one turn's AgentEvents in the terminal: streamed text, tool status lines
 * ("▸ Running `npm test`…" → "✓ `npm test` · 3.2 s" / "✗ `npm test` · failed · 3.2 s — why"),
 * the plan checklist, notices and the turn's end.
 * Approvals and questions arrive as cards (ThreadOutput.postCard), so their events print nothing.
 */
import { type AgentEvent, assertNever, type PlanStep, type ToolCallStatus } from "../../core/events.js";
import type { TurnRenderer } from "../../core/thread-output.js";
import { RUN_COMMAND } from "../../tools/shell/run-command.js";
import type { TerminalWriter } from "./terminal-writer.js";

const PREVIEW_MAX = 100;
const PLAN_MARK: Readonly<Record<PlanStep["status"], string>> = {
  pending: "[ ]",
  in_progress: "[~]",
  done: "[x]",
};
const FAILED_WORD: Readonly<Record<Exclude<ToolCallStatus, "ok">, string>> = {
  error: "failed",
  denied: "denied",
  interrupted: "interrupted",
  not_started: "not started",
};

function cut(text: string): string {
  return text.length > PREVIEW_MAX ? `${text.slice(0, PREVIEW_MAX - 1)}…` : text;
}

/**
 * A call as a status-line label: the first line of its preview in backticks, after the tool name
 * (left out for a command, which speaks for itself); the tool name alone when there is no preview.
 */
export function statusLabel(preview: string, name: string): string {
  const first = preview
    .split("\n")
    .find((line) => line.trim() !== "")
    ?.trim();
  if (first === undefined) return `\`${name}\``;
  const code = `\`${cut(first)}\``;
  return name === RUN_COMMAND ? code : `${name} ${code}`;
}

/** The first line of a failed call's output preview, without the engine's "Failed:" prefix. */
function failureReason(outputPreview: string): string {
  const first = outputPreview.split(/\n|⏎/)[0] ?? "";
  return cut(first.replace(/^Failed:\s*/, "").trim());
}

/** "3.2 s" */
export function formatSeconds(durationMs: number): string {
  return `${(durationMs / 1000).toFixed(1)} s`;
}

/** The TurnRenderer for one console turn; `onClose` tells the channel the turn is over. */
export class ConsoleTurnRenderer implements TurnRenderer {
  private readonly labels = new Map<string, string>();
  private closed = false;

  constructor(
    private readonly writer: TerminalWriter,
    private readonly onClose: () => void,
  ) {}

  async handle(event: AgentEvent): Promise<void> {
    const w = this.writer;
    switch (event.type) {
      case "text-delta":
        w.write(event.delta);
        return;
      case "assistant-message-done":
        w.breakLine();
        return;
      case "reasoning-delta":
      case "tool-output-delta":
      case "permission-required":
      case "question-asked":
        // Reasoning and raw tool output stay out of the chat; approvals and questions are cards.
        return;
      case "plan-updated":
        w.line(w.style("bold", "Plan"));
        for (const step of event.steps) w.line(`  ${PLAN_MARK[step.status]} ${step.title}`);
        return;
      case "tool-call-started": {
        const label = statusLabel(event.preview, event.name);
        this.labels.set(event.callId, label);
        const cleared = event.clearedBy === undefined ? "" : w.style("dim", ` · ${event.clearedBy}`);
        w.line(`${w.style("cyan", `▸ Running ${label}…`)}${cleared}`);
        return;
      }
      case "tool-call-finished":
        this.toolFinished(event);
        return;
      case "notice": {
        const mark = event.level === "warning" ? w.style("yellow", "⚠") : w.style("dim", "ℹ");
        w.line(`${mark} ${event.message}`);
        return;
      }
      case "compaction-started":
        w.line(w.style("dim", "… compacting the conversation"));
        return;
      case "compaction-finished":
        w.line(w.style("dim", `(compacted ${event.removedMessages} earlier messages)`));
        return;
      case "turn-completed":
        w.breakLine();
        if (event.status !== "completed")
          w.line(w.style("yellow", `(turn ended: ${event.status.replace("_", " ")})`));
        return;
      case "error":
        w.line(w.style("red", `✗ ${event.recoverable ? "problem" : "error"}: ${event.message}`));
        return;
      default:
        assertNever(event);
    }
  }

  private toolFinished(event: Extract<AgentEvent, { type: "tool-call-finished" }>): void {
    const w = this.writer;
    const label = this.labels.get(event.callId) ?? `\`${event.name}\``;
    this.labels.delete(event.callId);
    const took = w.style("dim", formatSeconds(event.durationMs));
    if (event.status === "ok") {
      w.line(`${w.style("green", "✓")} ${label} · ${took}`);
      return;
    }
    const outcome = event.reason ?? FAILED_WORD[event.status];
    const reason = failureReason(event.outputPreview);
    const detail = reason === "" ? "" : w.style("dim", ` — ${reason}`);
    w.line(`${w.style("red", "✗")} ${label} · ${outcome} · ${took}${detail}`);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.writer.breakLine();
    this.onClose();
  }
}
