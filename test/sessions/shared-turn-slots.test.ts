/**
 * SharedTurnSlots: the per-person turn cap counted across processes. Two instances over one
 * coordination stand for two processes: the cap holds across both (per person), a turn waiting in
 * one is woken by a release in the other (by its message, not a poll) or given up, and a holder that dies
 * without releasing (its calls never answered, so its leases are never renewed) frees its slot for
 * the other once the lease lapses.
 */
import pino from "pino";
import { describe, expect, it } from "vitest";
import { qualifiedUserId } from "../../src/approvals/authorisation.js";
import { SharedTurnSlots } from "../../src/sessions/shared-turn-slots.js";
import type { Coordination } from "../../src/store/coordination/coordination.js";
import { eventually } from "../support/eventually.js";
import { memoryCoordinationPerTest } from "./helpers/memory-coordination.js";

const silent = pino({ level: "silent" });
const ana = qualifiedUserId("slack", "U1");
const ben = qualifiedUserId("slack", "U2");
/** Long enough that nothing lapses or polls within a test, unless it says otherwise. */
const SLOW = { ttlMs: 60_000, renewMs: 20_000 };

const memory = memoryCoordinationPerTest();

function slotsOf(
  processId: string,
  perPerson: number,
  options: { via?: Coordination; timing?: typeof SLOW; firstRetryMs?: number } = {},
): SharedTurnSlots {
  return new SharedTurnSlots({
    coordination: options.via ?? memory.coordination,
    perPerson,
    processId,
    timing: options.timing ?? SLOW,
    firstRetryMs: options.firstRetryMs ?? SLOW.renewMs,
    logger: silent,
  });
}

/** A promise's state, once pending callbacks ran. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => {
    done = true;
  });
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

/**
 * `coordination` as a process sees it that can die: from `die()` on, none of its calls is ever
 * answered. `renewals` counts the lease renewals it made.
 */
function mortal(inner: Coordination) {
  let dead = false;
  const seen = { renewals: 0 };
  const coordination = new Proxy(inner, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if (dead) return new Promise(() => undefined);
        if (prop === "renew") seen.renewals++;
        return value.apply(target, args);
      };
    },
  });
  return {
    coordination,
    seen,
    die: () => {
      dead = true;
    },
  };
}

describe("SharedTurnSlots", () => {
  it("caps each person's running turns across both processes", async () => {
    const [a, b] = [slotsOf("A", 2), slotsOf("B", 2)];
    expect(await a.tryTake(ana)).toBe(true);
    expect(await b.tryTake(ana)).toBe(true);
    expect(await a.tryTake(ana)).toBe(false);
    expect(await b.tryTake(ana)).toBe(false);
    expect(await b.tryTake(ben)).toBe(true);
    a.release(ana);
    await eventually(() => b.tryTake(ana), "B to take the slot A released");
    expect(await a.tryTake(ana)).toBe(false);
    expect(() => slotsOf("C", 0)).toThrow(/positive whole number/);
  });

  it("a turn waiting in one process is woken by a release in the other, and by one in its own", async () => {
    // The first back-off is the renewal interval (20 s): only a release message can wake a waiter here.
    const [a, b] = [slotsOf("A", 1), slotsOf("B", 1)];
    expect(await a.tryTake(ana)).toBe(true);
    const bTakes = b.take(ana);
    expect(await settled(bTakes)).toBe(false);
    a.release(ana);
    await bTakes;
    expect(await a.tryTake(ana)).toBe(false);
    const bAgain = b.take(ana);
    expect(await settled(bAgain)).toBe(false);
    b.release(ana);
    await bAgain;
    expect(await a.tryTake(ana)).toBe(false);
  });

  it("a waiting turn that is given up stops waiting at once, taking nothing", async () => {
    // The first back-off is the renewal interval (20 s): only the abort can end this wait soon.
    const [a, b] = [slotsOf("A", 1), slotsOf("B", 1)];
    expect(await a.tryTake(ana)).toBe(true);
    const quit = new AbortController();
    const bTakes = b.take(ana, quit.signal);
    expect(await settled(bTakes)).toBe(false);
    quit.abort();
    expect(await bTakes).toBe(false);
    a.release(ana);
    await eventually(() => a.tryTake(ana), "A to take its slot again (B holds none)");
    expect(await b.take(ana, quit.signal)).toBe(false);
  });

  it("a holder that dies without releasing frees its slot once the lease lapses", async () => {
    const timing = { ttlMs: 200, renewMs: 40 };
    const dying = mortal(memory.coordination);
    const a = slotsOf("A", 1, { via: dying.coordination, timing });
    const b = slotsOf("B", 1, { timing, firstRetryMs: 10 });
    expect(await a.tryTake(ana)).toBe(true);
    const bTakes = b.take(ana);
    // While A lives, its heartbeat keeps the slot past the TTL (a renewal every 40 ms, the TTL 200).
    await eventually(() => dying.seen.renewals >= 8, "A to renew its slot past the TTL");
    expect(await settled(bTakes)).toBe(false);
    dying.die();
    await bTakes;
    expect(await b.tryTake(ana)).toBe(false);
  });
});
