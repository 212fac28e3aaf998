/**
 * FailoverWatch resumes the orphaned sessions a scan finds, one failing not keeping the others
 * orphaned; a scan asked for while one is under way joins it, and once stopped nothing scans.
 */
import pino from "pino";
import { describe, expect, it } from "vitest";
import { FailoverWatch } from "../../src/sessions/failover.js";

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

const silent = pino({ level: "silent" });

describe("FailoverWatch", () => {
  it("a session that fails to resume (an unreadable record) does not keep the others orphaned", async () => {
    const resumed: string[] = [];
    const watch = new FailoverWatch({
      orphans: async () => ["bad", "good"],
      resume: async (sessionId) => {
        if (sessionId === "bad") throw new Error("session bad: unreadable stored data");
        resumed.push(sessionId);
      },
      intervalMs: 60_000,
      logger: silent,
    });
    watch.start();
    await watch.scan();
    await watch.stop();
    expect(resumed).toEqual(["good"]);
  });

  it("a scan asked for while one is under way joins it, and both end once it has", async () => {
    const orphans = heldOrphans();
    const resumed: string[] = [];
    const watch = new FailoverWatch({
      orphans: orphans.list,
      resume: async (sessionId) => {
        resumed.push(sessionId);
      },
      intervalMs: 60_000,
      logger: silent,
    });
    watch.start();
    const first = watch.scan();
    const second = watch.scan();
    expect(orphans.calls()).toBe(1);
    orphans.answer(["a"]);
    await Promise.all([first, second]);
    expect(resumed).toEqual(["a"]);

    const third = watch.scan(); // the one before has ended: a new scan
    expect(orphans.calls()).toBe(2);
    orphans.answer(["b"]);
    await third;
    expect(resumed).toEqual(["a", "b"]);
    await watch.stop();
  });

  it("stop waits for the scan under way, and after it nothing scans", async () => {
    const orphans = heldOrphans();
    const resumed: string[] = [];
    const watch = new FailoverWatch({
      orphans: orphans.list,
      resume: async (sessionId) => {
        resumed.push(sessionId);
      },
      intervalMs: 60_000,
      logger: silent,
    });
    watch.start();
    void watch.scan();
    let stopped = false;
    const stopping = watch.stop().then(() => {
      stopped = true;
    });
    await Promise.resolve();
    expect(stopped).toBe(false);
    orphans.answer(["a"]);
    await stopping;
    expect(resumed).toEqual(["a"]);

    watch.start();
    const late = watch.scan();
    expect(orphans.calls()).toBe(1);
    await late;
  });

  it("logs a listing of orphans that failed, and scans again after it", async () => {
    const lines: string[] = [];
    let calls = 0;
    const watch = new FailoverWatch({
      orphans: async () => {
        calls += 1;
        if (calls === 1) throw new Error("store down");
        return [];
      },
      resume: async () => undefined,
      intervalMs: 60_000,
      logger: pino({ level: "warn" }, { write: (line: string) => lines.push(line) }),
    });
    watch.start();
    await watch.scan();
    expect(lines.map((line) => JSON.parse(line).msg)).toEqual(["scanning for orphaned sessions failed"]);
    await watch.scan();
    expect(calls).toBe(2);
    await watch.stop();
  });
});
