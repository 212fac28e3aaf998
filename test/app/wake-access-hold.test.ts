/**
 * WakeAccess before a channel has connected: schedules start first, so a wake-up for a platform
 * whose access rules are not registered yet must not run unchecked. It is held until the rules
 * come (then checked as usual), and rejected — never woken — when the hold ends or the wakers
 * shut down. The console, which has no rules, is still not checked.
 */
import { describe, expect, it } from "vitest";
import { WakeAccess } from "../../src/app/wake-access.js";
import type { WakeResult } from "../../src/sessions/wake-turns.js";
import { CONSOLE, recordingSessions, SLACK, turn } from "./wake-access-helpers.js";

/** Lets every pending promise callback run (no clock involved). */
const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The promise's outcome so far: its value, its error, or "pending". */
function track(promise: Promise<WakeResult>) {
  const state: { value?: WakeResult; error?: unknown; settled: boolean } = { settled: false };
  promise.then(
    (value) => Object.assign(state, { value, settled: true }),
    (error: unknown) => Object.assign(state, { error, settled: true }),
  );
  return state;
}

describe("WakeAccess before the platform registered its rules", () => {
  it("does not start a wake-up for a platform with no registered rules; it waits for them", async () => {
    const access = new WakeAccess();
    const { sessions, woken } = recordingSessions();
    const wake = track(access.guard(sessions).wake(turn(SLACK)));
    await flush();
    expect(woken).toEqual([]);
    expect(wake.settled).toBe(false);
    const asked: string[] = [];
    access.register("slack", async (userId) => {
      asked.push(userId);
      return true;
    });
    await flush();
    expect(wake.value).toEqual({ status: "started" });
    expect(asked).toEqual(["U1ANA"]);
    expect(woken).toHaveLength(1);
  });

  it("checks a held wake-up with the rules that arrive: refused when they say no", async () => {
    const access = new WakeAccess();
    const { sessions, woken } = recordingSessions();
    const pending = access.guard(sessions).wake(turn(SLACK));
    access.register("slack", async () => false);
    expect(await pending).toEqual({
      status: "refused",
      reason: "Ana (id U1ANA) may no longer use Coworker in this conversation",
    });
    expect(woken).toEqual([]);
  });

  it("rejects, without waking, when the rules do not come within the hold", async () => {
    const access = new WakeAccess({ holdMs: 0 });
    const { sessions, woken } = recordingSessions();
    await expect(access.guard(sessions).wake(turn(SLACK))).rejects.toThrow(
      "slack is not connected: cannot check whether Ana (id U1ANA) may still use Coworker there",
    );
    expect(woken).toEqual([]);
    access.register("slack", async () => true);
    expect(await access.guard(sessions).wake(turn(SLACK))).toEqual({ status: "started" });
  });

  it("lets a held wake-up go, rejected, when the wakers shut down", async () => {
    const access = new WakeAccess();
    const { sessions, woken } = recordingSessions();
    const stopping = new AbortController();
    const pending = access.guard(sessions, stopping.signal).wake(turn(SLACK));
    await flush();
    stopping.abort();
    await expect(pending).rejects.toThrow("slack is not connected");
    access.register("slack", async () => true);
    await flush();
    expect(woken).toEqual([]);
    // Once stopped, a new wake-up is not held either.
    const other = new WakeAccess();
    await expect(other.guard(sessions, stopping.signal).wake(turn(SLACK))).rejects.toThrow(
      "slack is not connected",
    );
  });

  it("still wakes the console, which has no rules, at once", async () => {
    const access = new WakeAccess();
    const { sessions, woken } = recordingSessions();
    expect(await access.guard(sessions).wake(turn(CONSOLE))).toEqual({ status: "started" });
    expect(woken).toHaveLength(1);
  });
});
