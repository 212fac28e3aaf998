/**
 * Turn recovery: what to do with a turn found in progress when a session's pump starts (after a
 * restart, an eviction, or a decision that found no turn waiting). The process may have died at
 * any point of the turn — even before its opening user message reached the history, or while the
 * model was answering — and the stored turn and history together say how far it got.
 */
import type { ConversationMessage } from "../core/messages.js";
import { isErrorMarker } from "../engine/outbound.js";
import { unansweredToolCalls } from "../engine/history-calls.js";
import type { TurnMarker } from "../approvals/parked-turn.js";

/**
 * - `rerun`: the turn's user message never reached the history: run the turn again.
 * - `retry`: a retry that had not written anything yet: retry again.
 * - `resume`: tool calls are waiting for answers, or a tool answered last: resume the loop.
 * - `answer`: the history ends with a user message nobody answered (the model call was cut off).
 * - `done`: the turn had finished its work; only its closing was lost.
 */
export type TurnRecovery = "rerun" | "retry" | "resume" | "answer" | "done";

/**
 * How to continue the stored turn `marker` given the session's persisted history: its newest
 * messages, with `historyStart` messages before them (the marker counts the whole history).
 */
export function recoveryOf(
  marker: TurnMarker,
  history: readonly ConversationMessage[],
  historyStart = 0,
): TurnRecovery {
  const start = marker.startedFrom;
  // An opening before the window (the turn itself wrote more than a window holds) is stored.
  const opened =
    start !== undefined &&
    (start.historyLength < historyStart ||
      history.slice(start.historyLength - historyStart).some((m) => m.role === "user"));
  if (start?.how === "run" && !opened) return "rerun";
  const last = history.at(-1);
  if (
    start?.how === "retry" &&
    historyStart + history.length === start.historyLength &&
    last &&
    isErrorMarker(last)
  )
    return "retry";
  if (unansweredToolCalls(history).length > 0 || last?.role === "tool") return "resume";
  return last?.role === "user" ? "answer" : "done";
}
