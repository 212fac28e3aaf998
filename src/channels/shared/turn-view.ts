/**
 * The turn view: what one turn has to show so far, folded from its AgentEvents by one pure
 * function, `foldTurn`, into an immutable snapshot. It holds the answer text, tool status lines,
 * notes and the plan in the order they happened, what the agent is doing now (the working
 * indicator), whether the model is reasoning, what the turn waits for, and how it ended. Every
 * channel's renderer folds its events through here and only formats the view, so Slack,
 * Telegram and the console agree on what a turn showed; each renders when its pacing allows,
 * never per event.
 *
 * A fold step copies only what changed (the item list is shallow-copied when an item changes),
 * so streaming a long answer stays cheap.
 */
import {
  type AgentEvent,
  assertNever,
  type PlanStep,
  type ToolCallStatus,
  type TurnStatus,
} from "../../core/events.js";
import { ASK_USER } from "../../tools/interactive-tools.js";
import type { LabelledCall } from "./tool-line-label.js";

/** One tool call's status line as it stands. */
export interface ToolLine {
  readonly callId: string;
  readonly name: string;
  readonly preview: string;
  readonly status: "running" | ToolCallStatus;
  readonly durationMs?: number;
  /** Why a call that did not succeed ended so ("exit 1", "denied by policy"). */
  readonly reason?: string;
  /** What let it run without a person's press ("allowed by reviewer: …"). */
  readonly clearedBy?: string;
  /** Set while the call waits for a person. */
  readonly waiting?: "approval" | "answer";
  /** Whether the call ran at all (a call denied before it started, or a question, did not). */
  readonly started: boolean;
}

/**
 * A short note in the turn. `progress` and `compacting` tell what the agent is busy with right
 * now (activity notes: they do not interrupt the answer text, and a newer one replaces the one
 * before it while no other note came between); the others are part of what the turn showed.
 */
export type TurnNote =
  | { readonly kind: "notice"; readonly level: "info" | "warning"; readonly message: string }
  /** A recoverable error: the turn went on. */
  | { readonly kind: "problem"; readonly message: string }
  | { readonly kind: "compacted"; readonly removedMessages: number }
  | { readonly kind: "progress"; readonly message: string }
  | { readonly kind: "compacting" };

export type TurnItem =
  | { readonly kind: "text"; readonly markdown: string }
  | { readonly kind: "tool"; readonly line: ToolLine }
  | { readonly kind: "note"; readonly note: TurnNote };

/** What the agent is doing now, for a working indicator ("is thinking…", "is running npm test…"). */
export type Activity =
  | { readonly kind: "thinking" }
  | { readonly kind: "running"; readonly call: LabelledCall }
  | { readonly kind: "progress"; readonly message: string }
  | { readonly kind: "compacting" }
  /** Waiting for a person: no indicator. */
  | { readonly kind: "waiting" };

/** What the turn waits for, until the agent moves on. */
export type Waiting = { readonly kind: "approval"; readonly tool: string } | { readonly kind: "answer" };

export type TurnOutcome =
  | { readonly kind: "running" }
  | { readonly kind: "completed" }
  | { readonly kind: "interrupted" }
  | { readonly kind: "max_iterations"; readonly iterations: number }
  | { readonly kind: "failed" }
  /** The renderer was closed before the turn completed; `paused` when a call waits for a person. */
  | { readonly kind: "unfinished"; readonly paused: boolean };

/** The control a live turn message offers: Stop while it runs, Retry after a failure. */
export type TurnControl = "stop" | "retry";

export interface TurnView {
  /** Answer text, tool lines and notes, in order. */
  readonly items: readonly TurnItem[];
  readonly plan: readonly PlanStep[] | undefined;
  readonly activity: Activity;
  /** The model streamed reasoning since its last answer text. */
  readonly reasoning: boolean;
  readonly waiting: Waiting | undefined;
  /** The answer text the current model step streamed (the live tail of the answer). */
  readonly stepText: string;
  /** The last finished assistant message that had content. */
  readonly latestAnswer: string;
  /** The final text the turn completed with ("" until then). */
  readonly finalText: string;
  readonly outcome: TurnOutcome;
  /** The last error's message, recoverable or not. */
  readonly lastError: string | undefined;
  /** The last unrecoverable error's message. */
  readonly fatalError: string | undefined;
  /** Fold bookkeeping: the text item deltas append to (none after a tool line or note). */
  readonly openText: number | undefined;
  /** Fold bookkeeping: the newest note's item. */
  readonly lastNote: number | undefined;
  /** Fold bookkeeping: the current model step's message is done (the next delta starts a new one). */
  readonly stepDone: boolean;
  /**
   * The model's last message called no tool: its answer is complete and the turn is ending
   * (renderers then wait for the end to show it whole rather than starting a live message).
   */
  readonly answered: boolean;
}

const THINKING: Activity = Object.freeze({ kind: "thinking" });
const WAITING: Activity = Object.freeze({ kind: "waiting" });

/** The view of a turn before its first event. */
export const EMPTY_TURN: TurnView = Object.freeze({
  items: Object.freeze([]),
  plan: undefined,
  activity: THINKING,
  reasoning: false,
  waiting: undefined,
  stepText: "",
  latestAnswer: "",
  finalText: "",
  outcome: Object.freeze({ kind: "running" }),
  lastError: undefined,
  fatalError: undefined,
  openText: undefined,
  lastNote: undefined,
  stepDone: false,
  answered: false,
});

type Change = Partial<TurnView>;

/**
 * The view with `changes` applied in order (a later one wins). Object.assign rather than spread:
 * spreading change objects of varying shapes took V8's slow path, several µs per event.
 */
function next(view: TurnView, ...changes: Change[]): TurnView {
  return Object.freeze(Object.assign({}, view, ...changes));
}

function replaced(items: readonly TurnItem[], index: number, item: TurnItem): readonly TurnItem[] {
  const copy = [...items];
  copy[index] = Object.freeze(item);
  return Object.freeze(copy);
}

function appended(items: readonly TurnItem[], item: TurnItem): readonly TurnItem[] {
  return Object.freeze([...items, Object.freeze(item)]);
}

/** Streamed answer text: extends the open text item, or opens one after tool lines and notes. */
function appendText(view: TurnView, delta: string): Change {
  if (delta.length === 0) return {};
  const open = view.openText === undefined ? undefined : view.items[view.openText];
  if (open?.kind === "text" && view.openText !== undefined) {
    return { items: replaced(view.items, view.openText, { kind: "text", markdown: open.markdown + delta }) };
  }
  return { items: appended(view.items, { kind: "text", markdown: delta }), openText: view.items.length };
}

/** One assistant message is complete: its final content wins over the streamed deltas. */
function finishText(view: TurnView, content: string): Change {
  const at = view.openText;
  if (at === undefined) {
    if (content.trim().length === 0) return {};
    return { items: appended(view.items, { kind: "text", markdown: content }) };
  }
  if (content.length > 0) {
    return { items: replaced(view.items, at, { kind: "text", markdown: content }), openText: undefined };
  }
  const lastNote = view.lastNote !== undefined && view.lastNote > at ? view.lastNote - 1 : view.lastNote;
  return { items: Object.freeze(view.items.filter((_, i) => i !== at)), openText: undefined, lastNote };
}

/** Add or replace a call's status line (it keeps its position). */
function setTool(view: TurnView, line: ToolLine): Change {
  const index = view.items.findIndex((item) => item.kind === "tool" && item.line.callId === line.callId);
  const item: TurnItem = { kind: "tool", line: Object.freeze(line) };
  return {
    items: index === -1 ? appended(view.items, item) : replaced(view.items, index, item),
    openText: undefined,
  };
}

/** Whether a note only tells what the agent is busy with (see TurnNote). */
export function isActivityNote(note: TurnNote): boolean {
  return note.kind === "progress" || note.kind === "compacting";
}

function addNote(view: TurnView, note: TurnNote): Change {
  const item: TurnItem = { kind: "note", note: Object.freeze(note) };
  if (!isActivityNote(note)) {
    return { items: appended(view.items, item), openText: undefined, lastNote: view.items.length };
  }
  const last = view.lastNote === undefined ? undefined : view.items[view.lastNote];
  if (last?.kind === "note" && isActivityNote(last.note) && view.lastNote !== undefined) {
    return { items: replaced(view.items, view.lastNote, item) };
  }
  return { items: appended(view.items, item), lastNote: view.items.length };
}

function outcomeOf(status: TurnStatus, iterations: number): TurnOutcome {
  switch (status) {
    case "completed":
      return { kind: "completed" };
    case "interrupted":
      return { kind: "interrupted" };
    case "max_iterations":
      return { kind: "max_iterations", iterations };
    case "error":
      return { kind: "failed" };
    default:
      return assertNever(status);
  }
}

/** The view after one more event (pure: `view` is left as it was). */
export function foldTurn(view: TurnView, event: AgentEvent): TurnView {
  switch (event.type) {
    case "text-delta":
      return next(view, appendText(view, event.delta), {
        stepText: (view.stepDone ? "" : view.stepText) + event.delta,
        stepDone: false,
        answered: false,
        reasoning: false,
        waiting: undefined,
      });
    case "reasoning-delta":
      return view.reasoning && view.activity === THINKING
        ? view
        : next(view, { reasoning: true, activity: THINKING });
    case "assistant-message-done":
      return next(view, finishText(view, event.content), {
        latestAnswer: event.content.trim() !== "" ? event.content : view.latestAnswer,
        stepDone: true,
        answered: event.toolCalls === 0,
        reasoning: false,
      });
    case "plan-updated":
      return next(view, { plan: event.steps });
    case "tool-call-started":
      return next(
        view,
        setTool(view, {
          callId: event.callId,
          name: event.name,
          preview: event.preview,
          status: "running",
          ...(event.clearedBy === undefined ? {} : { clearedBy: event.clearedBy }),
          started: true,
        }),
        {
          answered: false,
          waiting: undefined,
          activity: Object.freeze({ kind: "running", call: { name: event.name, preview: event.preview } }),
        },
      );
    case "tool-output-delta":
      return view;
    case "tool-call-finished": {
      const before = toolLineOf(view, event.callId);
      return next(
        view,
        setTool(view, {
          callId: event.callId,
          name: event.name,
          preview: before?.preview ?? "",
          ...(before?.clearedBy === undefined ? {} : { clearedBy: before.clearedBy }),
          status: event.status,
          durationMs: event.durationMs,
          ...(event.reason === undefined ? {} : { reason: event.reason }),
          started: before?.started ?? false,
        }),
        { waiting: undefined, activity: THINKING },
      );
    }
    case "permission-required": {
      const before = toolLineOf(view, event.callId);
      const line = before ?? {
        callId: event.callId,
        name: event.tool,
        preview: "",
        status: "running",
        started: false,
      };
      return next(view, setTool(view, { ...line, waiting: "approval" }), {
        waiting: Object.freeze({ kind: "approval", tool: event.tool }),
        activity: WAITING,
      });
    }
    case "question-asked":
      return next(
        view,
        setTool(view, {
          callId: event.callId,
          name: ASK_USER,
          preview: event.questions[0]?.question ?? "",
          status: "running",
          waiting: "answer",
          started: false,
        }),
        { waiting: Object.freeze({ kind: "answer" }), activity: WAITING },
      );
    case "notice":
      if (event.level === "progress") {
        return next(view, addNote(view, { kind: "progress", message: event.message }), {
          activity: Object.freeze({ kind: "progress", message: event.message }),
        });
      }
      return next(view, addNote(view, { kind: "notice", level: event.level, message: event.message }));
    case "compaction-started":
      return next(view, addNote(view, { kind: "compacting" }), {
        activity: Object.freeze({ kind: "compacting" }),
      });
    case "compaction-finished":
      return next(view, addNote(view, { kind: "compacted", removedMessages: event.removedMessages }), {
        activity: THINKING,
      });
    case "turn-completed":
      return next(
        view,
        !hasAnswerText(view) && event.finalText.trim().length > 0 ? finishText(view, event.finalText) : {},
        {
          finalText: event.finalText,
          outcome: Object.freeze(outcomeOf(event.status, event.iterations)),
        },
      );
    case "error":
      return event.recoverable
        ? next(view, addNote(view, { kind: "problem", message: event.message }), { lastError: event.message })
        : next(view, { fatalError: event.message, lastError: event.message });
    default:
      return assertNever(event);
  }
}

/** The view once its renderer is closed: a turn still running ends unfinished (paused when waiting). */
export function closeTurn(view: TurnView): TurnView {
  if (view.outcome.kind !== "running") return view;
  return next(view, { outcome: Object.freeze({ kind: "unfinished", paused: isWaiting(view) }) });
}

/** A call's status line, if it has one. */
export function toolLineOf(view: TurnView, callId: string): ToolLine | undefined {
  for (const item of view.items) if (item.kind === "tool" && item.line.callId === callId) return item.line;
  return undefined;
}

/** The status lines of all calls, in order. */
export function toolLines(view: TurnView): ToolLine[] {
  return view.items.flatMap((item) => (item.kind === "tool" ? [item.line] : []));
}

/** The notes, in order. */
export function notes(view: TurnView): TurnNote[] {
  return view.items.flatMap((item) => (item.kind === "note" ? [item.note] : []));
}

/** Whether a call waits for a person. */
export function isWaiting(view: TurnView): boolean {
  return view.items.some((item) => item.kind === "tool" && item.line.waiting !== undefined);
}

/** Whether any answer text was shown. */
export function hasAnswerText(view: TurnView): boolean {
  return view.items.some((item) => item.kind === "text" && item.markdown.trim().length > 0);
}

/** Whether there is anything lasting to show yet (activity notes are not). */
export function hasContent(view: TurnView): boolean {
  return (
    view.plan !== undefined ||
    view.items.some((item) =>
      item.kind === "text"
        ? item.markdown.trim().length > 0
        : item.kind === "tool" || !isActivityNote(item.note),
    )
  );
}

/** All answer text so far, the messages' parts joined by blank lines. */
export function answerText(view: TurnView): string {
  return view.items.flatMap((item) => (item.kind === "text" ? [item.markdown] : [])).join("\n\n");
}

/** The control the turn's live message carries now, if any. */
export function turnControl(view: TurnView): TurnControl | undefined {
  if (view.outcome.kind === "running") return "stop";
  return view.outcome.kind === "failed" ? "retry" : undefined;
}
