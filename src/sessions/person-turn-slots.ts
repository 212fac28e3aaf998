/**
 * PersonTurnSlots: how many turns one person may have running at once in this process. Every
 * thread is a session of its own, so without a cap one person (or one allowed bot) posting a
 * message in each of a hundred threads started a hundred model calls and tool runs at once, on the
 * team's model account. A person's further turns wait in line, first come first served, their
 * sessions' locks let go meanwhile (turn-scheduler.ts); other people's turns are not held up, in
 * their own threads or in a thread the person's waiting message shares (the scheduler starts the
 * first queued message whose sender has a free slot). A turn parked at a person keeps its slot only while its pump
 * runs; approvals and answers never need one. With several processes on one store the slots are
 * shared through the coordination instead (shared-turn-slots.ts); both are `TurnSlots`.
 */

/** Turns one person may run at once unless configured (`sessions.max_turns_per_person`). */
export const DEFAULT_TURNS_PER_PERSON = 4;

/** A person's running-turn slots, as the turn scheduler takes them and gives them back. */
export interface TurnSlots {
  /** Turns one person may run at once. */
  readonly perPerson: number;
  /**
   * Take one of `person`'s slots now; false (nothing taken) when all are in use. In-process slots
   * answer at once; shared ones (several processes) once the store has.
   */
  tryTake(person: string): boolean | Promise<boolean>;
  /**
   * Take one of `person`'s slots, once one is free: true. False (nothing taken) when `signal`
   * aborts first (it may, say, when other work could run instead).
   */
  take(person: string, signal?: AbortSignal): Promise<boolean>;
  /** Give back one slot `person` holds (each slot taken is given back once). */
  release(person: string): void;
}

/** Throws unless `perPerson` is a positive whole number. */
export function checkTurnsPerPerson(perPerson: number): void {
  if (!Number.isSafeInteger(perPerson) || perPerson < 1)
    throw new Error(`turns per person must be a positive whole number, got ${perPerson}`);
}

/** Running-turn slots per person, with a line of waiting turns each. */
export class PersonTurnSlots implements TurnSlots {
  private readonly running = new Map<string, number>();
  private readonly waiting = new Map<string, Array<() => void>>();

  /** `perPerson`: turns one person may run at once (a positive whole number). */
  constructor(readonly perPerson: number) {
    checkTurnsPerPerson(perPerson);
  }

  /** Take one of `person`'s slots now; false (nothing taken) when all are in use. */
  tryTake(person: string): boolean {
    const used = this.running.get(person) ?? 0;
    if (used >= this.perPerson) return false;
    this.running.set(person, used + 1);
    return true;
  }

  /** Take one of `person`'s slots, once one is free; false when `signal` aborts first (it leaves the line). */
  take(person: string, signal?: AbortSignal): Promise<boolean> {
    if (signal?.aborted) return Promise.resolve(false);
    if (this.tryTake(person)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const line = this.waiting.get(person) ?? [];
      this.waiting.set(person, line);
      const given = () => {
        signal?.removeEventListener("abort", leave);
        resolve(true);
      };
      const leave = () => {
        line.splice(line.indexOf(given), 1);
        if (line.length === 0) this.waiting.delete(person);
        resolve(false);
      };
      line.push(given);
      signal?.addEventListener("abort", leave, { once: true });
    });
  }

  /** Give a slot back: to `person`'s next waiting turn, if any. */
  release(person: string): void {
    const line = this.waiting.get(person);
    const next = line?.shift();
    if (next) {
      if (line?.length === 0) this.waiting.delete(person);
      next();
      return;
    }
    const used = (this.running.get(person) ?? 1) - 1;
    if (used > 0) this.running.set(person, used);
    else this.running.delete(person);
  }
}
