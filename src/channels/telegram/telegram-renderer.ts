/**
 * TurnRenderer for Telegram: folds one turn's AgentEvents into a compact live view (plan, tool
 * status lines, notices, what it waits for, the answer's tail) shown through a LiveReply, keeps
 * "typing…" alive every ~4 s while the agent works, and on close delivers the final answer as
 * Telegram HTML split into ≤ 4096-character messages.
 */
import type { Logger } from "pino";
import {
  type AgentEvent,
  assertNever,
  type PlanStep,
  type ToolCallStatus,
  type TurnStatus,
} from "../../core/events.js";
import type { TurnRenderer } from "../../core/thread-output.js";
import { RUN_COMMAND } from "../../tools/shell/run-command.js";
import { RETRY_KEYBOARD } from "./telegram-card.js";
import { errorText } from "./telegram-errors.js";
import { escapeHtml, htmlToPlainText, markdownToTelegramHtml } from "./telegram-html.js";
import type { ChatSender } from "./telegram-send.js";
import { splitTelegramHtml, TELEGRAM_TEXT_LIMIT } from "./telegram-split.js";
import { LiveReply, type LiveReplyOptions } from "./telegram-stream.js";

export const TYPING_INTERVAL_MS = 4000;
/** The first "typing…" waits this long: a turn answered sooner needs none (and spends no API call). */
export const TYPING_DELAY_MS = 500;

interface ToolLine {
  readonly callId: string;
  readonly name: string;
  readonly preview: string;
  status: ToolCallStatus | "running";
  durationMs?: number;
  /** Why a call that did not succeed ended so ("exit 1", "denied by policy"). */
  reason?: string;
  /** What let it run without a person's press ("allowed by reviewer: …"). */
  readonly clearedBy?: string;
}

const TOOL_ICONS: Readonly<Record<ToolLine["status"], string>> = {
  running: "⏳",
  ok: "✓",
  error: "✗",
  denied: "⛔",
  interrupted: "⏹",
  not_started: "–",
};
/** What follows the label of a call that did not run to an ordinary end. */
const TOOL_OUTCOMES: Readonly<Partial<Record<ToolLine["status"], string>>> = {
  denied: "denied",
  interrupted: "interrupted",
  not_started: "not run",
};
const PLAN_ICONS: Readonly<Record<PlanStep["status"], string>> = {
  pending: "▫️",
  in_progress: "▶️",
  done: "✅",
};
const MAX_TOOL_LINES = 6;
const MAX_NOTES = 3;

function clip(text: string, limit: number): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > limit ? `${line.slice(0, limit - 1)}…` : line;
}

/**
 * One tool call's status line: "⏳ Running <code>npm test</code>…", "✓ <code>npm test</code> · 3.2 s",
 * "✓ read_file <code>src/app.ts</code> · 0.1 s" (a command's label speaks for itself; other calls
 * name their tool), "✗ <code>npm test</code> · exit 1", "⛔ … · denied".
 */
function toolLineHtml(tool: ToolLine): string {
  const preview = clip(tool.preview, 80);
  const code = `<code>${escapeHtml(preview === "" ? tool.name : preview)}</code>`;
  const label = preview === "" || tool.name === RUN_COMMAND ? code : `${escapeHtml(tool.name)} ${code}`;
  const cleared = tool.clearedBy === undefined ? "" : ` · ${escapeHtml(tool.clearedBy)}`;
  if (tool.status === "running") return `${TOOL_ICONS.running} Running ${label}…${cleared}`;
  const outcome = tool.status === "ok" ? undefined : (tool.reason ?? TOOL_OUTCOMES[tool.status]);
  const took = tool.durationMs === undefined ? "" : ` · ${(tool.durationMs / 1000).toFixed(1)} s`;
  return `${TOOL_ICONS[tool.status]} ${label}${outcome === undefined ? took + cleared : ` · ${escapeHtml(outcome)}`}`;
}

/** A non-zero 31-bit draft id derived from the turn id. */
export function draftIdOf(turnId: string): number {
  let hash = 7;
  for (const char of turnId) hash = (hash * 31 + (char.codePointAt(0) ?? 0)) | 0;
  return (Math.abs(hash) % 2_147_483_646) + 1;
}

export interface TelegramTurnRendererOptions {
  readonly sender: ChatSender;
  readonly live: Omit<LiveReplyOptions, "sender" | "logger">;
  readonly logger: Logger;
}

/** Renders one turn into a Telegram chat (see module comment). */
export class TelegramTurnRenderer implements TurnRenderer {
  private readonly live: LiveReply;
  private text = "";
  private stepDone = false;
  private lastAnswer = "";
  private thinking = false;
  private plan: readonly PlanStep[] = [];
  private readonly tools: ToolLine[] = [];
  private notes: readonly { readonly text: string; readonly transient: boolean }[] = [];
  private waiting: string | undefined;
  private working = true;
  private ending: { readonly text: string; readonly note?: string } | undefined;
  private failed = false;
  private lastError: string | undefined;
  private typingTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private closing: Promise<void> | undefined;

  constructor(private readonly options: TelegramTurnRendererOptions) {
    this.live = new LiveReply({ ...options.live, sender: options.sender, logger: options.logger });
    this.scheduleTyping(TYPING_DELAY_MS);
  }

  /** "typing…" lasts about 5 s: re-send it every ~4 s while the agent works (not while it waits). */
  private scheduleTyping(delayMs: number): void {
    this.typingTimer = setTimeout(() => {
      if (this.closed) return;
      if (this.working) {
        this.options.sender.typing().catch((error: unknown) => {
          this.options.logger.debug({ err: errorText(error) }, "telegram chat action failed");
        });
      }
      this.scheduleTyping(TYPING_INTERVAL_MS);
    }, delayMs);
    this.typingTimer.unref();
  }

  async handle(event: AgentEvent): Promise<void> {
    this.working = event.type !== "permission-required" && event.type !== "question-asked";
    this.apply(event);
    if (!this.ending) this.live.show(this.view);
  }

  private apply(event: AgentEvent): void {
    switch (event.type) {
      case "text-delta":
        if (this.stepDone) this.text = "";
        this.stepDone = false;
        this.thinking = false;
        this.waiting = undefined;
        this.text += event.delta;
        return;
      case "reasoning-delta":
        this.thinking = true;
        return;
      case "assistant-message-done":
        if (event.content.trim() !== "") this.lastAnswer = event.content;
        this.stepDone = true;
        this.thinking = false;
        return;
      case "plan-updated":
        this.plan = event.steps;
        return;
      case "tool-call-started":
        this.waiting = undefined;
        this.tools.push({
          callId: event.callId,
          name: event.name,
          preview: event.preview,
          status: "running",
          ...(event.clearedBy === undefined ? {} : { clearedBy: event.clearedBy }),
        });
        return;
      case "tool-output-delta":
        return;
      case "tool-call-finished": {
        const line = this.tools.find((tool) => tool.callId === event.callId);
        if (line)
          Object.assign(line, { status: event.status, durationMs: event.durationMs, reason: event.reason });
        this.waiting = undefined;
        return;
      }
      case "permission-required":
        this.waiting = `⏸ Waiting for approval: <code>${escapeHtml(event.tool)}</code>`;
        return;
      case "question-asked":
        this.waiting = "⏸ Waiting for your answer…";
        return;
      case "notice":
        this.note(
          event.level === "progress" ? `⏳ ${event.message}` : `ℹ️ ${event.message}`,
          event.level === "progress",
        );
        return;
      case "compaction-started":
        this.note("🗜 Compacting the conversation…", true);
        return;
      case "compaction-finished":
        this.note(`🗜 Compacted ${event.removedMessages} earlier messages`, true);
        return;
      case "turn-completed":
        this.ending = { text: event.finalText, ...this.endingNote(event.status, event.iterations) };
        this.failed = event.status === "error";
        return;
      case "error":
        if (event.recoverable) this.note(`⚠️ ${event.message}`, false);
        this.lastError = event.message;
        return;
      default:
        assertNever(event);
    }
  }

  private endingNote(status: TurnStatus, iterations: number): { note?: string } {
    if (status === "interrupted") return { note: "⏹ Stopped." };
    if (status === "max_iterations") return { note: `⚠️ Stopped after ${iterations} steps (the step limit).` };
    if (status === "error")
      return { note: `⚠️ The turn failed${this.lastError ? `: ${this.lastError}` : "."}` };
    return {};
  }

  /** Progress notes replace the previous progress note; others accumulate (last three kept). */
  private note(text: string, transient: boolean): void {
    const kept = transient && this.notes.at(-1)?.transient ? this.notes.slice(0, -1) : this.notes;
    this.notes = [...kept, { text, transient }].slice(-MAX_NOTES);
  }

  private statusHtml(): string {
    const plan = this.plan.map((step) => `${PLAN_ICONS[step.status]} ${escapeHtml(clip(step.title, 80))}`);
    const tools = this.tools.slice(-MAX_TOOL_LINES).map(toolLineHtml);
    const hidden = this.tools.length - tools.length;
    const lines = [
      ...plan,
      ...(hidden > 0 ? [`<i>… ${hidden} earlier tool calls</i>`] : []),
      ...tools,
      ...this.notes.map((note) => `<i>${escapeHtml(note.text)}</i>`),
      ...(this.waiting ? [this.waiting] : []),
      ...(this.thinking && this.text === "" ? ["💭 thinking…"] : []),
    ];
    return lines.join("\n");
  }

  /** The live view: status lines, then as much of the answer's tail as fits. */
  private readonly view = (): string => {
    const status = this.statusHtml();
    const answer = this.text.trim() === "" ? "" : markdownToTelegramHtml(this.text);
    if (answer === "") return status;
    const budget = TELEGRAM_TEXT_LIMIT - htmlToPlainText(status).length - 4;
    const chunks = splitTelegramHtml(answer, Math.max(budget, 1000));
    const tail = chunks.length > 1 ? `…\n${chunks.at(-1)}` : (chunks[0] ?? "");
    return status === "" ? tail : `${status}\n\n${tail}`;
  };

  private toolSummary(): string {
    if (this.tools.length === 0) return "";
    // A call that ran without a person's press keeps saying what cleared it, in the lasting message too.
    const shown = this.tools.slice(0, 8).map((tool) => {
      const cleared = tool.clearedBy === undefined ? "" : ` (${escapeHtml(clip(tool.clearedBy, 80))})`;
      return `${escapeHtml(tool.name)} ${TOOL_ICONS[tool.status]}${cleared}`;
    });
    const more = this.tools.length > shown.length ? ` · +${this.tools.length - shown.length} more` : "";
    return `<i>🔧 ${shown.join(" · ")}${more}</i>`;
  }

  /** The final answer as ≤ 4096-character HTML chunks. */
  private finalChunks(): string[] {
    const ending = this.ending ?? { text: "", note: "⚠️ The turn ended before it finished." };
    const answer = ending.text.trim() !== "" ? ending.text : this.lastAnswer || this.text;
    const parts = [
      this.toolSummary(),
      markdownToTelegramHtml(answer),
      ending.note ? escapeHtml(ending.note) : "",
    ];
    const html = parts.filter((part) => part !== "").join("\n\n");
    return splitTelegramHtml(html === "" ? "(no answer)" : html);
  }

  async close(): Promise<void> {
    this.closing ??= (async () => {
      this.closed = true;
      clearTimeout(this.typingTimer);
      try {
        // A turn that failed (provider error) can be retried from its last message.
        await this.live.finish(this.finalChunks(), this.failed ? RETRY_KEYBOARD : undefined);
      } catch (error) {
        this.options.logger.error({ err: errorText(error) }, "telegram: could not deliver the final answer");
      }
    })();
    return this.closing;
  }
}
