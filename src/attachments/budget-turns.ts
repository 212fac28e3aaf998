/**
 * Budget turns: files of one message are read in parallel, but take the hourly transcription
 * budget one after another in the order they were attached, so which recordings an over-budget
 * message has transcribed never depends on which read finished first. Each file gets a turn;
 * a file waits for its turn's `ready`, takes (or passes by) its share, then calls `pass`.
 */

/**
 * One file's place in its message's order for the hourly transcription budget: `ready` settles
 * once every file attached before it has taken its share of the budget or passed it by; `pass`
 * lets the next file go (idempotent). Files are read in parallel, so without it which recordings
 * an over-budget message has transcribed would depend on which read finished first.
 */
export interface BudgetTurn {
  readonly ready: Promise<void>;
  readonly pass: () => void;
}

/** A turn per file, in the files' order (see BudgetTurn). */
export function budgetTurns(count: number): BudgetTurn[] {
  const turns: BudgetTurn[] = [];
  let ready: Promise<void> = Promise.resolve();
  for (let index = 0; index < count; index++) {
    let pass!: () => void;
    const passed = new Promise<void>((resolve) => {
      pass = resolve;
    });
    turns.push({ ready, pass });
    // A file that passes early (not a recording) lets the next one go only when its own turn came.
    ready = ready.then(() => passed);
  }
  return turns;
}
