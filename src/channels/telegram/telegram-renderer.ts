/**
 * TurnRenderer for Telegram: folds one turn's AgentEvents into the shared turn view and shows it
 * compactly (plan, tool status lines, notices, what it waits for, the answer's tail) through a
 * LiveReply while the turn runs, says "typing…" while the agent works and the person sees nothing
 * new, and on close delivers the final answer as Telegram HTML split into ≤ 4096-character
 * messages.
 */
import { newestLines } from "../shared/newest-lines.js";
import type { Logger } from "pino";
import type { AgentEvent, PlanStep } from "../../core/events.js";
import type { TurnRenderer } from "../../core/thread-output.js";
import { formatToolLabel, type LabelFormat } from "../shared/tool-line-label.js";
import { clipLine } from "../../core/one-line.js";
import { FenceTracker, markdownTail } from "../shared/markdown-tail.js";
import { formatSeconds, TOOL_OUTCOME_WORDS } from "../shared/tool-line-format.js";
import {
  closeTurn,
  EMPTY_TURN,
  foldTurn,
  notes,
  type ToolLine,
  type TurnNote,
  type TurnView,
  toolLines,
  turnControl,
  type Waiting,
} from "../shared/turn-view.js";
import { RETRY_KEYBOARD } from "./telegram-card.js";
import { errorText, isTopicGone } from "./telegram-errors.js";
import { escapeHtml, htmlToPlainText, markdownToTelegramHtml } from "./telegram-html.js";
import type { ChatSender } from "./telegram-send.js";
import { splitTelegramHtml, TELEGRAM_TEXT_LIMIT } from "./telegram-split.js";
import { LiveReply, type LiveReplyOptions } from "./telegram-stream.js";

/**
 * "typing…" shows for about 5 s: it is re-sent this often, and once a preview is visible only
 * after the preview has not changed for this long (previews change at most every 1.1 / 3.1 s).
 */
export const TYPING_INTERVAL_MS = 4000;
/**
 * The first "typing…" waits this long with nothing shown: a reply within about a second keeps the
 * flow of a conversation and needs none (and spends no API call).
 */
export const TYPING_DELAY_MS = 1000;

/**
 * How much of the answer's markdown the live view renders: its end, four times a message's worth,
 * so the last screen is always full however much markup the source carries.
 */
export const PREVIEW_SOURCE_CHARS = 4 * TELEGRAM_TEXT_LIMIT;

const TOOL_ICONS: Readonly<Record<ToolLine["status"], string>> = {
  running: "⏳",
  ok: "✓",
  error: "✗",
  denied: "⛔",
  interrupted: "⏹",
  not_started: "–",
};
const PLAN_ICONS: Readonly<Record<PlanStep["status"], string>> = {
  pending: "▫️",
  in_progress: "▶️",
  done: "✅",
};
/** A failed call shows its duration (or the engine's reason); the others say how they ended. */
const OUTCOME_WORDS: Readonly<Partial<Record<ToolLine["status"], string>>> = {
  denied: TOOL_OUTCOME_WORDS.denied,
  interrupted: TOOL_OUTCOME_WORDS.interrupted,
  not_started: TOOL_OUTCOME_WORDS.not_started,
};
/** What `close` resolves with once the answer is delivered: nothing. */
const DELIVERED = (): void => undefined;
const MAX_TOOL_LINES = 6;
const MAX_NOTES = 3;
/** The most plan steps the live view lists; the others are counted on a line of their own. */
const MAX_PLAN_LINES = 10;
/** The longest note, or reason on a tool line, in the live view (a longer one ends in "…"). */
const MAX_NOTE_CHARS = 200;
/**
 * The least room the live view keeps for the answer's tail: the status lines above it give way
 * first, so status and answer together always fit one message.
 */
const MIN_ANSWER_CHARS = 1000;
/** What the live view's status may take: one message less the answer's room and the separators. */
const MAX_STATUS_CHARS = TELEGRAM_TEXT_LIMIT - MIN_ANSWER_CHARS - 4;
const HTML_LABEL: LabelFormat = {
  code: (label) => `<code>${escapeHtml(label)}</code>`,
  name: escapeHtml,
};

/**
 * One tool call's status line: "⏳ Running <code>npm test</code>…", "✓ <code>npm test</code> · 3.2 s",
 * "✓ read_file <code>src/app.ts</code> · 0.1 s", "✗ <code>npm test</code> · exit 1", "⛔ … · denied".
 */
function toolLineHtml(tool: ToolLine): string {
  const label = formatToolLabel(tool, HTML_LABEL);
  const cleared =
    tool.clearedBy === undefined ? "" : ` · ${escapeHtml(clipLine(tool.clearedBy, MAX_NOTE_CHARS))}`;
  if (tool.status === "running") return `${TOOL_ICONS.running} Running ${label}…${cleared}`;
  const outcome = tool.status === "ok" ? undefined : (tool.reason ?? OUTCOME_WORDS[tool.status]);
  const took = tool.durationMs === undefined ? "" : ` · ${formatSeconds(tool.durationMs)}`;
  const ended =
    outcome === undefined ? took + cleared : ` · ${escapeHtml(clipLine(outcome, MAX_NOTE_CHARS))}`;
  return `${TOOL_ICONS[tool.status]} ${label}${ended}`;
}

/**
 * The plan as checklist lines: all of a short plan; of a longer one, MAX_PLAN_LINES steps around
 * the step in progress (else the first one not done, else the end), the others counted on an
 * "… n earlier steps" / "… n more steps" line.
 */
function planLines(steps: readonly PlanStep[]): string[] {
  const line = (step: PlanStep) => `${PLAN_ICONS[step.status]} ${escapeHtml(clipLine(step.title, 80))}`;
  if (steps.length <= MAX_PLAN_LINES) return steps.map(line);
  const working = steps.findIndex((step) => step.status === "in_progress");
  const next = working !== -1 ? working : steps.findIndex((step) => step.status !== "done");
  const focus = next === -1 ? steps.length - 1 : next;
  // One finished step stays in sight before the current one.
  const start = Math.min(Math.max(0, focus - 1), steps.length - MAX_PLAN_LINES);
  const end = start + MAX_PLAN_LINES;
  const later = steps.length - end;
  return [
    ...(start > 0 ? [`<i>… ${start} earlier ${start === 1 ? "step" : "steps"}</i>`] : []),
    ...steps.slice(start, end).map(line),
    ...(later > 0 ? [`<i>… ${later} more ${later === 1 ? "step" : "steps"}</i>`] : []),
  ];
}

/**
 * Status lines joined so their visible text takes at most `max` characters: when too long, the
 * oldest lines give way to an "…" line (what the agent does now matters most). Lines are whole
 * HTML (every tag closed), so dropping some never unbalances the rest.
 */
function fitStatus(lines: readonly string[], max: number): string {
  const visible = (line: string) => htmlToPlainText(line).length;
  const joined = lines.join("\n");
  if (visible(joined) <= max) return joined;
  const marker = "<i>…</i>";
  const { kept } = newestLines(lines, max - visible(marker), visible);
  return [marker, ...kept].join("\n");
}

/** A note as shown in the live view, and whether the next activity note may replace it. */
interface ShownNote {
  readonly text: string;
  readonly transient: boolean;
}

function noteOf(note: TurnNote): ShownNote {
  switch (note.kind) {
    case "notice":
      return { text: `ℹ️ ${note.message}`, transient: false };
    case "problem":
      return { text: `⚠️ ${note.message}`, transient: false };
    case "progress":
      return { text: `⏳ ${note.message}`, transient: true };
    case "compacting":
      return { text: "🗜 Compacting the conversation…", transient: true };
    case "compacted":
      return { text: `🗜 Compacted ${note.removedMessages} earlier messages`, transient: true };
  }
}

/**
 * The last three notes, each clipped to MAX_NOTE_CHARS; a transient note replaces a transient one
 * just before it.
 */
function shownNotes(view: TurnView): readonly ShownNote[] {
  const shown: ShownNote[] = [];
  for (const note of notes(view)) {
    const next = noteOf(note);
    if (next.transient && shown.at(-1)?.transient) shown.pop();
    shown.push(next);
  }
  return shown.slice(-MAX_NOTES).map((note) => ({ ...note, text: clipLine(note.text, MAX_NOTE_CHARS) }));
}

function waitingHtml(waiting: Waiting): string {
  return waiting.kind === "approval"
    ? `⏸ Waiting for approval: <code>${escapeHtml(waiting.tool)}</code>`
    : "⏸ Waiting for your answer…";
}

function endingNote(view: TurnView): string | undefined {
  switch (view.outcome.kind) {
    case "running":
    case "completed":
      return undefined;
    case "interrupted":
      return "⏹ Stopped.";
    case "max_iterations":
      return `⚠️ Stopped after ${view.outcome.iterations} steps (the step limit).`;
    case "failed":
      return `⚠️ The turn failed${view.lastError ? `: ${view.lastError}` : "."}`;
    case "unfinished":
      return "⚠️ The turn ended before it finished.";
  }
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
  private turn: TurnView = EMPTY_TURN;
  /** The code fence open where the live view's answer tail starts, tracked from beat to beat. */
  private readonly previewFences = new FenceTracker();
  private readonly startedAt = Date.now();
  private typedAt = Number.NEGATIVE_INFINITY;
  private typingTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private closing: Promise<void> | undefined;

  constructor(private readonly options: TelegramTurnRendererOptions) {
    // The added keys first: see "Code on the message path" in docs/architecture.md.
    this.live = new LiveReply({ sender: options.sender, logger: options.logger, ...options.live });
    this.scheduleTyping(TYPING_DELAY_MS);
  }

  /**
   * When "typing…" is due next: once the person has seen nothing for TYPING_DELAY_MS (nothing new
   * for TYPING_INTERVAL_MS once a preview shows), and not sooner than TYPING_INTERVAL_MS after the
   * last one.
   */
  private typingDueAt(): number {
    const shownAt = this.live.shownAt;
    const quietUntil =
      shownAt === undefined ? this.startedAt + TYPING_DELAY_MS : shownAt + TYPING_INTERVAL_MS;
    return Math.max(quietUntil, this.typedAt + TYPING_INTERVAL_MS);
  }

  private scheduleTyping(delayMs: number): void {
    this.typingTimer = setTimeout(() => this.typingTick(), delayMs);
    this.typingTimer.unref();
  }

  /** Say "typing…" when it is due and the agent works (not while it waits for a person). */
  private typingTick(): void {
    if (this.closed) return;
    const now = Date.now();
    const due = this.typingDueAt();
    if (now < due) {
      this.scheduleTyping(due - now);
      return;
    }
    if (this.turn.activity.kind !== "waiting") {
      this.typedAt = now;
      this.options.sender.typing().catch((error: unknown) => {
        this.options.logger.debug({ err: errorText(error) }, "telegram chat action skipped");
      });
    }
    this.scheduleTyping(TYPING_INTERVAL_MS);
  }

  /** Folds `event` in at once (no promise of its own: an event is handled as it is passed). */
  handle(event: AgentEvent): undefined {
    this.turn = foldTurn(this.turn, event);
    if (this.turn.outcome.kind === "running") this.live.show(this.view);
    return undefined;
  }

  /** The live view's status lines, at most MAX_STATUS_CHARS visible characters. */
  private statusHtml(): string {
    const view = this.turn;
    const plan = planLines(view.plan ?? []);
    const started = toolLines(view).filter((tool) => tool.started);
    const tools = started.slice(-MAX_TOOL_LINES).map(toolLineHtml);
    const hidden = started.length - tools.length;
    const lines = [
      ...plan,
      ...(hidden > 0 ? [`<i>… ${hidden} earlier tool calls</i>`] : []),
      ...tools,
      ...shownNotes(view).map((note) => `<i>${escapeHtml(note.text)}</i>`),
      ...(view.waiting ? [waitingHtml(view.waiting)] : []),
      ...(view.reasoning && view.stepText === "" ? ["💭 thinking…"] : []),
    ];
    return fitStatus(lines, MAX_STATUS_CHARS);
  }

  /**
   * The live view: status lines, then as much of the answer's tail as fits; nothing once the turn
   * is over, or once its answer is complete while no preview shows yet (it goes out whole at the end).
   */
  private readonly view = (): string => {
    if (this.turn.outcome.kind !== "running") return "";
    if (this.turn.answered && this.live.shownAt === undefined) return "";
    const status = this.statusHtml();
    const text = this.turn.stepText;
    const shown = markdownTail(text, PREVIEW_SOURCE_CHARS, this.previewFences);
    const answer = shown.text.trim() === "" ? "" : markdownToTelegramHtml(shown.text);
    if (answer === "") return status;
    // The status is held to MAX_STATUS_CHARS, so this is at least MIN_ANSWER_CHARS; the 4 are the
    // blank line after the status and the "…" line before a cut tail.
    const budget = TELEGRAM_TEXT_LIMIT - htmlToPlainText(status).length - 4;
    const chunks = splitTelegramHtml(answer, budget);
    const tail = chunks.length > 1 || shown.cut ? `…\n${chunks.at(-1)}` : (chunks[0] ?? "");
    return status === "" ? tail : `${status}\n\n${tail}`;
  };

  private toolSummary(): string {
    const started = toolLines(this.turn).filter((tool) => tool.started);
    if (started.length === 0) return "";
    // A call that ran without a person's press keeps saying what cleared it, in the lasting message too.
    const shown = started.slice(0, 8).map((tool) => {
      const cleared = tool.clearedBy === undefined ? "" : ` (${escapeHtml(clipLine(tool.clearedBy, 80))})`;
      return `${escapeHtml(tool.name)} ${TOOL_ICONS[tool.status]}${cleared}`;
    });
    const more = started.length > shown.length ? ` · +${started.length - shown.length} more` : "";
    return `<i>🔧 ${shown.join(" · ")}${more}</i>`;
  }

  /** The final answer as ≤ 4096-character HTML chunks. */
  private finalChunks(): string[] {
    const view = this.turn;
    const answer = view.finalText.trim() !== "" ? view.finalText : view.latestAnswer || view.stepText;
    const note = endingNote(view);
    const parts = [this.toolSummary(), markdownToTelegramHtml(answer), note ? escapeHtml(note) : ""];
    const html = parts.filter((part) => part !== "").join("\n\n");
    return splitTelegramHtml(html === "" ? "(no answer)" : html);
  }

  close(): Promise<void> {
    this.closing ??= this.deliverAnswer();
    return this.closing;
  }

  /** The final answer, delivered once (see LiveReply.finish); a failure is logged, never passed on. */
  private deliverAnswer(): Promise<void> {
    this.closed = true;
    clearTimeout(this.typingTimer);
    try {
      this.turn = closeTurn(this.turn);
      // A turn that failed (provider error) can be retried from its last message.
      const retry = turnControl(this.turn) === "retry";
      return this.live
        .finish(this.finalChunks(), retry ? RETRY_KEYBOARD : undefined)
        .then(DELIVERED, (error: unknown) => this.undelivered(error));
    } catch (error) {
      this.undelivered(error);
      return Promise.resolve();
    }
  }

  /** Log where and why the final answer was lost. */
  private undelivered(error: unknown): void {
    // Never sent elsewhere instead (General is not the topic's place): the log says where it was lost.
    if (isTopicGone(error)) {
      const { chatId, threadId } = this.options.sender.address;
      this.options.logger.warn(
        { err: errorText(error), chatId, topicId: threadId },
        "telegram: topic closed or deleted; answer not delivered",
      );
    } else
      this.options.logger.error({ err: errorText(error) }, "telegram: could not deliver the final answer");
  }
}
