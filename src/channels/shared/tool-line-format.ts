/**
 * The small pieces every channel's tool status line is built from, so they read alike
 * everywhere: how long a call took (in seconds; `core/duration-text.ts` has the unit that reads
 * best), and the word for a call that did not run to an ordinary end.
 */
import type { ToolCallStatus } from "../../core/events.js";

/** "3.2 s", "0.0 s": a duration in seconds with one decimal. */
export function formatSeconds(ms: number): string {
  return `${(ms / 1_000).toFixed(1)} s`;
}

/** What follows the label of a call that did not succeed, when the engine gives no reason. */
export const TOOL_OUTCOME_WORDS: Readonly<Record<Exclude<ToolCallStatus, "ok">, string>> = Object.freeze({
  error: "failed",
  denied: "denied",
  interrupted: "interrupted",
  not_started: "not run",
});
