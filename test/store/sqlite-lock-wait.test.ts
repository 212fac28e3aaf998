/**
 * Waiting out another connection's SQLite lock runs on the injected clock: a locked batch and a
 * locked open pause 10 ms, doubling up to 250 ms, and give up once the lock has been held for the
 * busy timeout (or 3 s of a close) by that clock; ending a wait clears its pending retry.
 */
import { describe, expect, it } from "vitest";
import type { Clock } from "../../src/core/clock.js";
import { SqliteLockWait, waitOutLock } from "../../src/store/backends/sqlite-lock-wait.js";
import { manualClock } from "../support/manual-clock.js";

const BUSY = Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" });
// 10 ms, doubling to 250 ms: the eighth pause takes the wait past a 1 s busy timeout.
const PAUSES = [10, 20, 40, 80, 160, 250, 250, 250];

/** A clock whose time moves only by the pauses set on it; each pause's callback runs at once (next microtask). */
function steppingClock(): Clock & { readonly pauses: number[] } {
  const pauses: number[] = [];
  let now = 1_000_000;
  return {
    pauses,
    now: () => now,
    setTimer(callback, ms) {
      pauses.push(ms);
      now += ms;
      queueMicrotask(callback);
      return pauses.length;
    },
    clearTimer: () => undefined,
  };
}

describe("waitOutLock", () => {
  it("pauses on the injected clock, doubling up to 250 ms, and fails once the lock outlasted the busy timeout", async () => {
    const clock = steppingClock();
    let tries = 0;
    const opening = waitOutLock(
      "/data/coworker.sqlite",
      1_000,
      () => {
        tries += 1;
        throw BUSY;
      },
      clock,
    );
    await expect(opening).rejects.toThrow(
      /coworker\.sqlite stayed locked .* for 1000 ms; it could not be opened/,
    );
    expect(clock.pauses).toEqual(PAUSES);
    expect(tries).toBe(PAUSES.length + 1);
  });

  it("returns the first try that finds the file free", async () => {
    const clock = steppingClock();
    let tries = 0;
    const opened = await waitOutLock(
      "/data/coworker.sqlite",
      1_000,
      () => {
        tries += 1;
        if (tries < 3) throw BUSY;
        return "open";
      },
      clock,
    );
    expect({ opened, pauses: clock.pauses }).toEqual({ opened: "open", pauses: [10, 20] });
  });
});

describe("SqliteLockWait", () => {
  it("retries a locked batch on the injected clock until the busy timeout, and its end clears the pending retry", () => {
    const clock = manualClock();
    let retries = 0;
    const wait = new SqliteLockWait({ file: "f", busyTimeoutMs: 1_000, retry: () => retries++, clock });
    expect(wait.retryLater(undefined)).toBe(true);
    expect({ waiting: wait.waiting, pending: clock.pending() }).toEqual({ waiting: true, pending: 1 });
    clock.fire();
    expect(retries).toBe(1);
    wait.retryLater(undefined);
    wait.end();
    expect({ waiting: wait.waiting, pending: clock.pending() }).toEqual({ waiting: false, pending: 0 });
  });

  it("grows its pauses like an open's and gives up at the busy timeout, or 3 s into a close", () => {
    const clock = steppingClock();
    const wait = new SqliteLockWait({ file: "f", busyTimeoutMs: 1_000, retry: () => undefined, clock });
    while (wait.retryLater(undefined));
    expect(clock.pauses).toEqual(PAUSES);
    wait.end();

    const closing = steppingClock();
    const closed = new SqliteLockWait({
      file: "f",
      busyTimeoutMs: 60_000,
      retry: () => undefined,
      clock: closing,
    });
    const closingAt = closing.now();
    while (closed.retryLater(closingAt));
    expect(closing.now() - closingAt).toBeGreaterThanOrEqual(3_000);
    expect(closing.now() - closingAt).toBeLessThan(3_000 + 250);
    closed.end();
  });
});
