/**
 * PumpSlots: the turn slots (person-turn-slots.ts) as a session's pump (turn-scheduler.ts) holds
 * them — one taken at once for a message started straight away, one of several people's waited
 * for when no one queued has a free slot, and each given back once, in one place — plus what a
 * person whose turn waits for a slot is told in the thread. Kept apart from the scheduler so the
 * pump reads as the order turns run in, and the slot bookkeeping (a slot too many given back, a
 * shared slot that answered too late) sits in one place.
 */
import type { PlatformUser } from "../core/thread-target.js";
import type { TurnSlots } from "./person-turn-slots.js";
import { shownPerson } from "./session-status.js";

/** One of a person's turn slots a pump holds, until `giveBack` gives it back. */
export interface HeldSlot {
  readonly person: string;
}

/** A pump's side of the turn slots: taking, waiting for and giving back the slots its turns run in. */
export class PumpSlots {
  /** `slots`: the turns each person may run at once (in this process, or shared across processes). */
  constructor(private readonly slots: TurnSlots) {}

  /**
   * One of `person`'s slots, taken at once; undefined (nothing taken) when all are in use, or when
   * the slots answer only through the store — shared slots, which come with a gate, under which
   * startNow never starts a turn: a slot they take is given back.
   */
  atOnce(person: string): HeldSlot | undefined {
    const taken = this.slots.tryTake(person);
    if (typeof taken === "boolean") return taken ? { person } : undefined;
    void taken.then(
      (got) => {
        if (got) this.slots.release(person);
      },
      () => undefined,
    );
    return undefined;
  }

  /**
   * A slot of one of `people`, once one of theirs is free; undefined when `stop` aborts the wait
   * first. Each person's wait ends as one is had; a slot more, taken meanwhile, is given back.
   */
  async ofAnyOf(people: readonly string[], stop: AbortSignal): Promise<HeldSlot | undefined> {
    if (stop.aborted) return undefined;
    const { slots } = this;
    const done = new AbortController();
    const end = () => done.abort();
    stop.addEventListener("abort", end, { once: true });
    const takes = await Promise.allSettled(
      people.map((person) =>
        slots.take(person, done.signal).then(
          (taken) => {
            if (taken) end();
            return taken;
          },
          (error: unknown) => {
            end();
            throw error;
          },
        ),
      ),
    );
    stop.removeEventListener("abort", end);
    let slot: HeldSlot | undefined;
    let failed: PromiseRejectedResult | undefined;
    for (const [i, take] of takes.entries()) {
      const person = people[i] as string;
      if (take.status === "rejected") failed ??= take;
      else if (take.value && slot) slots.release(person);
      else if (take.value) slot = { person };
    }
    if (!slot && failed) throw failed.reason;
    return slot;
  }

  /** Give a slot the pump holds back (the one place slots are released); undefined, for the holder's variable. */
  giveBack(slot: HeldSlot | undefined): undefined {
    if (slot) this.slots.release(slot.person);
    return undefined;
  }

  /**
   * What `user` is told in the thread when their turn waits for a slot (markdown: the name in it is
   * plain text, with the user id it cannot fake).
   */
  waitingNotice(platform: string, user: PlatformUser): string {
    return `${shownPerson(platform, user)}, you have ${this.slots.perPerson} turns running in other threads; this one starts when one of them ends.`;
  }
}
