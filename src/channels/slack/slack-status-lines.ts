/**
 * The compact progress lines of a turn: one status line per tool call that changes in place
 * ("Running `npm test`…" → "✓ `npm test` · 3.2 s" / "✗ `npm test` · exit 1"), the plan as a
 * checklist, and short notes, in mrkdwn. Pure formatting of the shared turn view's parts (the
 * label rule is channels/shared/tool-line-label.ts): the document decides where the lines go.
 */
import { clip } from "../../core/surrogate-pairs.js";
import { newestLines } from "../shared/newest-lines.js";
import type { PlanStep } from "../../core/events.js";
import { formatDuration } from "../../core/duration-text.js";
import { TOOL_OUTCOME_WORDS } from "../shared/tool-line-format.js";
import { formatToolLabel, type LabelFormat } from "../shared/tool-line-label.js";
import type { ToolLine, TurnNote } from "../shared/turn-view.js";
import { escapeMrkdwn, SLACK_LIMITS } from "./slack-limits.js";

/** What a status line needs of a tool call (the shared view's ToolLine is one). */
export type ToolLineState = Omit<ToolLine, "started">;

const MRKDWN_LABEL: LabelFormat = {
  // Backticks inside the label become look-alikes, so the code span stays intact.
  code: (label) => "`" + escapeMrkdwn(label.replace(/`/g, "ˋ")) + "`",
  name: escapeMrkdwn,
};

/** The mrkdwn status line of one tool call. */
export function toolLine(state: ToolLineState): string {
  const label = formatToolLabel(state, MRKDWN_LABEL);
  const took = state.durationMs !== undefined ? ` · ${formatDuration(state.durationMs)}` : "";
  const why = state.reason ? ` · ${escapeMrkdwn(state.reason)}` : undefined;
  const cleared = state.clearedBy ? ` · ${escapeMrkdwn(state.clearedBy)}` : "";
  if (state.waiting === "approval") return `:double_vertical_bar: ${label} — waiting for approval`;
  if (state.waiting === "answer") return `:double_vertical_bar: Waiting for your answer`;
  switch (state.status) {
    case "running":
      return `:hourglass_flowing_sand: Running ${label}…${cleared}`;
    case "ok":
      return `✓ ${label}${took}${cleared}`;
    case "error":
      return `✗ ${label}${why ?? took}`;
    case "denied":
      return `⊘ ${label}${why ?? ` — ${TOOL_OUTCOME_WORDS.denied}`}`;
    case "interrupted":
      return `■ ${label}${why ?? ` — ${TOOL_OUTCOME_WORDS.interrupted}`}`;
    case "not_started":
      return `– ${label}${why ?? ` — ${TOOL_OUTCOME_WORDS.not_started}`}`;
  }
}

/**
 * A lasting note as one line (activity notes show in the thinking status instead), its message
 * (a reviewer's reason, a provider's error, a failure) cut first, then passed through `safe`.
 */
function formatNote(note: TurnNote, safe: (message: string) => string): string | undefined {
  switch (note.kind) {
    case "notice":
      return `${note.level === "warning" ? ":warning:" : ":information_source:"} ${safe(note.message)}`;
    case "problem":
      return `:warning: ${safe(clip(note.message, 300))}`;
    case "compacted":
      return `:broom: Summarised ${note.removedMessages} earlier messages to make room.`;
    case "progress":
    case "compacting":
      return undefined;
  }
}

/** A lasting note as a mrkdwn line: its message escaped, so it cannot mention anyone or link. */
export function noteLine(note: TurnNote): string | undefined {
  return formatNote(note, escapeMrkdwn);
}

/**
 * A lasting note for a native stream, its message as it is: the stream makes mentions in it inert
 * (NativeOps.note, through defuseMentions), and escaping it too would show `&lt;` in the thread.
 */
export function streamNoteLine(note: TurnNote): string | undefined {
  return formatNote(note, (message) => message);
}

const PLAN_MARK: Readonly<Record<PlanStep["status"], string>> = {
  done: ":white_check_mark:",
  in_progress: ":arrow_forward:",
  pending: ":white_square:",
};

/** The plan as a mrkdwn checklist. */
export function planChecklist(steps: readonly PlanStep[]): string {
  const lines = steps.map(
    (step) => `${PLAN_MARK[step.status]} ${escapeMrkdwn(step.title.replace(/\s+/g, " "))}`,
  );
  return fitLines(["*Plan*", ...lines], SLACK_LIMITS.sectionText);
}

/**
 * Join lines so the result fits `max` characters: when too long, the oldest lines after the
 * first give way to a "… n earlier" marker (the newest state matters most).
 */
export function fitLines(lines: readonly string[], max: number): string {
  const joined = lines.join("\n");
  if (joined.length <= max) return joined;
  const [head = "", ...rest] = lines;
  const { kept, dropped } = newestLines(rest, max - head.length - 40);
  return clip([head, `_… ${dropped} earlier_`, ...kept].join("\n"), max);
}
