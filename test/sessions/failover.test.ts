/**
 * FailoverWatch scans at its interval (on a manual clock) and resumes the orphaned sessions a scan
 * finds, one failing not keeping the others orphaned; a listing that failed is logged and the next
 * interval scans again; stop waits for the scan under way, and after it nothing scans.
 */
import pino from "pino";
import { describe, expect, it } from "vitest";
import { FailoverWatch } from "../../src/sessions/failover.js";
import { type ManualClock, manualClock } from "../support/manual-clock.js";

const INTERVAL_MS = 60_000;

/** A manual clock that also tells when a timer is next set: a scan has ended and the next is armed. */
function armingClock(): ManualClock & { readonly armed: () => Promise<void> } {
  const clock = manualClock();
  const waiting: (() => void)[] = [];
  return {
    ...clock,
    setTimer(callback, ms) {
      const handle = clock.setTimer(callback, ms);
      for (const wake of waiting.splice(0)) wake();
      return handle;
    },
    armed: () => new Promise<void>((resolve) => waiting.push(resolve)),
  };
}

/** Fire the interval; resolves once the scan it started has ended and the next wait is armed. */
async function scanAtInterval(clock: ReturnType<typeof armingClock>): Promise<void> {
  expect(clock.pending(INTERVAL_MS)).toBe(1);
  const armed = clock.armed();
  clock.fire(INTERVAL_MS);
  await armed;
}

/** The messages a logger wrote (warn and above). */
function loggedLines() {
  const lines: { readonly msg: string; readonly sessionId?: string }[] = [];
  const logger = pino({ level: "warn" }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}

/** A listing of orphans the test answers by hand. */
function heldOrphans() {
  let answer: (ids: readonly string[]) => void = () => undefined;
  let calls = 0;
  const list = () => {
    calls += 1;
    return new Promise<readonly string[]>((resolve) => {
      answer = resolve;
    });
  };
  return { list, calls: () => calls, answer: (ids: readonly string[]) => answer(ids) };
}

/** Let every callback that can run now run (nothing here waits on real time). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("FailoverWatch", () => {
  it("resumes the orphans a scan finds at the interval, one failing to resume logged and the others resumed", async () => {
    const clock = armingClock();
    const { logger, lines } = loggedLines();
    const resumed: string[] = [];
    const watch = new FailoverWatch({
      orphans: async () => ["bad", "good"],
      resume: async (sessionId) => {
        if (sessionId === "bad") throw new Error("unreadable record");
        resumed.push(sessionId);
      },
      intervalMs: INTERVAL_MS,
      clock,
      logger,
    });
    watch.start();
    expect(resumed).toEqual([]); // nothing before the interval

    await scanAtInterval(clock);
    expect(resumed).toEqual(["good"]);
    expect(lines.map((line) => [line.msg, line.sessionId])).toEqual([
      ["resuming an orphaned session failed", "bad"],
    ]);

    await scanAtInterval(clock);
    expect(resumed).toEqual(["good", "good"]);
    await watch.stop();
  });

  it("logs a listing of orphans that failed, and the next interval scans again", async () => {
    const clock = armingClock();
    const { logger, lines } = loggedLines();
    const resumed: string[] = [];
    let calls = 0;
    const watch = new FailoverWatch({
      orphans: async () => {
        calls += 1;
        if (calls === 1) throw new Error("store down");
        return ["a"];
      },
      resume: async (sessionId) => {
        resumed.push(sessionId);
      },
      intervalMs: INTERVAL_MS,
      clock,
      logger,
    });
    watch.start();
    await scanAtInterval(clock);
    expect(lines.map((line) => line.msg)).toEqual(["scanning for orphaned sessions failed"]);
    expect(resumed).toEqual([]);

    await scanAtInterval(clock);
    expect(calls).toBe(2);
    expect(resumed).toEqual(["a"]);
    await watch.stop();
  });

  it("stop waits for the scan under way, and after it nothing scans", async () => {
    const clock = armingClock();
    const orphans = heldOrphans();
    const resumed: string[] = [];
    const watch = new FailoverWatch({
      orphans: orphans.list,
      resume: async (sessionId) => {
        resumed.push(sessionId);
      },
      intervalMs: INTERVAL_MS,
      clock,
      logger: pino({ level: "silent" }),
    });
    watch.start();
    clock.fire(INTERVAL_MS);
    expect(orphans.calls()).toBe(1);

    let stopped = false;
    const stopping = watch.stop().then(() => {
      stopped = true;
    });
    await settle();
    expect(stopped).toBe(false);
    orphans.answer(["a"]);
    await stopping;
    expect(resumed).toEqual(["a"]);
    expect(clock.pending()).toBe(0); // no next scan armed

    watch.start(); // stopped for good: starting again arms nothing
    clock.fire();
    expect(clock.pending()).toBe(0);
    expect(orphans.calls()).toBe(1);
  });
});
