/**
 * Which of a person's commands wait in their hand-over lane (hand-over-lanes.ts) and which a stop
 * spares: the lanes' policy by command name, apart from how lanes run. A command that acts on a
 * pending approval or only shows what is running is answered at once; one that changes a setting
 * waits its turn and outlives a stop; one that starts a turn is dropped by a stop like a message.
 */

/**
 * Commands answered at once even while the sender's lane is busy: they act on a pending approval
 * or only show what is running (stop is answered at once too, and first cancels the lane: each
 * channel handles it before asking this). Any other (new, mode, model, grants revoke, a skill,
 * the modules' commands) may change what the sender's earlier message meets, so it waits its turn.
 */
const AT_ONCE: ReadonlySet<string> = new Set(["approve", "deny", "status", "reviewer"]);

export function answeredAtOnce(command: string): boolean {
  return AT_ONCE.has(command);
}

/** Commands that start a turn: a stop drops them from the lane like a message (see keptByStop). */
const RUNS_A_TURN: ReadonlySet<string> = new Set(["skill"]);

/**
 * Whether a command waiting in its sender's lane outlives their stop: any that only changes or
 * shows a setting (a fresh session, a mode, a model, a grant, a subscription, a task) — what the
 * person asked for before stopping, which the stop does not undo — not one that runs a turn.
 */
export function keptByStop(command: string): boolean {
  return !RUNS_A_TURN.has(command);
}
