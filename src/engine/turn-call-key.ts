/**
 * Turn-call keys: what a tool call's pending item (approval, question, plan) and its tool-start
 * journal entry are stored under. The model chooses its calls' ids and may send an id an earlier
 * turn's call had; a turn reads only a window of the history, so it cannot rename every id used
 * before (history-calls.ts renames those it read). Keyed by the turn's id with the call's, a
 * decision or start recorded in one turn is never found by another. Entries stored before (keyed
 * by the call id alone) are still taken by the turn they were made in: made at or after its start.
 */

/** The turn a call is asked or started in: its id and when it started (ISO time). */
export interface CallTurn {
  readonly turnId: string;
  readonly startedAt: string;
}

/** The key of call `callId` of turn `turnId`; turn ids hold no ":", so no two turns' keys meet. */
export function turnCallKey(turnId: string, callId: string): string {
  return `${turnId}:${callId}`;
}

/**
 * Whether an entry stored under the call id alone (before turn-call keys), made at `at` (ISO
 * time), belongs to `turn`: an earlier turn's entry was made before this turn started.
 */
export function madeInTurn(turn: CallTurn, at: string): boolean {
  const made = Date.parse(at);
  return Number.isFinite(made) && made >= Date.parse(turn.startedAt);
}
