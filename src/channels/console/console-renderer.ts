/**
 * Renders one turn's AgentEvents in the terminal: streamed text, tool status lines
 * ("▸ Running `npm test`…" → "✓ `npm test` · 3.2 s" / "✗ `npm test` · failed · 3.2 s — why"),
 * the plan checklist, notices and the turn's end.
 * Approvals and questions arrive as cards (ThreadOutput.postCard), so their events print nothing.
 * Events are folded into the shared turn view; tool lines and the plan are printed from it.
 */
import { type AgentEvent, assertNever, type PlanStep, type ToolCallStatus } from "../../core/events.js";
import type { TurnRenderer } from "../../core/thread-output.js";
import { formatSeconds, TOOL_OUTCOME_WORDS } from "../shared/tool-line-format.js";
import { formatToolLabel, type LabelFormat, type LabelRule } from "../shared/tool-line-label.js";
import { clipLine } from "../../core/one-line.js";
import { EMPTY_TURN, foldTurn, type ToolLine, type TurnView, toolLineOf } from "../shared/turn-view.js";
import type { TerminalWriter } from "./terminal-writer.js";

const PLAN_MARK: Readonly<Record<PlanStep["status"], string>> = {
  pending: "[ ]",
  in_progress: "[~]",
  done: "[x]",
};
const FAILED_WORD: Readonly<Record<Exclude<ToolCallStatus, "ok">, string>> = {
  ...TOOL_OUTCOME_WORDS,
  not_started: "not started",
};
/** A terminal line is wider than a chat's: the first line of the preview, up to 100 characters. */
const CONSOLE_LABEL_RULE: LabelRule = Object.freeze({ maxChars: 100, firstLineOnly: true });
const BACKTICKS: LabelFormat = { code: (label) => `\`${label}\``, name: (tool) => tool };

/**
 * A call as a status-line label: the first line of its preview in backticks, after the tool name
 * (left out for a command, which speaks for itself); the tool name alone when there is no preview.
 */
export function statusLabel(preview: string, name: string): string {
  return formatToolLabel({ name, preview }, BACKTICKS, CONSOLE_LABEL_RULE);
}

/** The first line of a failed call's output preview, without the engine's "Failed:" prefix. */
function failureReason(outputPreview: string): string {
  const first = outputPreview.split(/\n|⏎/)[0] ?? "";
  return clipLine(first.replace(/^Failed:\s*/, ""), CONSOLE_LABEL_RULE.maxChars);
}

/** The TurnRenderer for one console turn; `onClose` tells the channel the turn is over. */
export class ConsoleTurnRenderer implements TurnRenderer {
  private turn: TurnView = EMPTY_TURN;
  private closed = false;

  constructor(
    private readonly writer: TerminalWriter,
    private readonly onClose: () => void,
  ) {}

  async handle(event: AgentEvent): Promise<void> {
    const w = this.writer;
    this.turn = foldTurn(this.turn, event);
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
        for (const step of this.turn.plan ?? []) w.line(`  ${PLAN_MARK[step.status]} ${step.title}`);
        return;
      case "tool-call-started":
      case "tool-call-finished": {
        const line = toolLineOf(this.turn, event.callId);
        if (line) this.toolLine(line, event.type === "tool-call-finished" ? event.outputPreview : "");
        return;
      }
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

  /** A call's status line as it now stands (a failure adds the first line of its output). */
  private toolLine(line: ToolLine, outputPreview: string): void {
    const w = this.writer;
    const label = statusLabel(line.preview, line.name);
    if (line.status === "running") {
      const cleared = line.clearedBy === undefined ? "" : w.style("dim", ` · ${line.clearedBy}`);
      w.line(`${w.style("cyan", `▸ Running ${label}…`)}${cleared}`);
      return;
    }
    const took = w.style("dim", formatSeconds(line.durationMs ?? 0));
    if (line.status === "ok") {
      w.line(`${w.style("green", "✓")} ${label} · ${took}`);
      return;
    }
    const outcome = line.reason ?? FAILED_WORD[line.status];
    const reason = failureReason(outputPreview);
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
