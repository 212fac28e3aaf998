/**
 * HandOverLanes: one sender's jobs run one at a time in order, other lanes beside them, a full
 * lane refuses, a failing job is logged and its lane goes on, and idle() waits for them all.
 */
import pino from "pino";
import { describe, expect, it } from "vitest";
import { HandOverLanes } from "../../../src/channels/shared/hand-over-lanes.js";

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

describe("HandOverLanes", () => {
  it("runs a lane's jobs in order, one at a time, and other lanes beside it", async () => {
    const lanes = new HandOverLanes({ maxWaiting: 5, logger: pino({ level: "silent" }) });
    const done: string[] = [];
    const slow = gate();
    const otherRan = gate();
    lanes.enqueue("alice", async () => {
      await slow.promise;
      done.push("alice 1");
    });
    lanes.enqueue("alice", async () => {
      done.push("alice 2");
    });
    lanes.enqueue("bob", async () => {
      done.push("bob 1");
      otherRan.open();
    });
    await otherRan.promise;
    expect(done).toEqual(["bob 1"]);
    slow.open();
    await lanes.idle();
    expect(done).toEqual(["bob 1", "alice 1", "alice 2"]);
  });

  it("refuses a job past maxWaiting, and takes one again once the lane has room", async () => {
    const lanes = new HandOverLanes({ maxWaiting: 2, logger: pino({ level: "silent" }) });
    const slow = gate();
    expect(lanes.enqueue("alice", () => slow.promise)).toBe(true);
    expect(lanes.enqueue("alice", async () => {})).toBe(true);
    expect(lanes.enqueue("alice", async () => {})).toBe(false);
    expect(lanes.enqueue("bob", async () => {})).toBe(true);
    slow.open();
    await lanes.idle();
    expect(lanes.enqueue("alice", async () => {})).toBe(true);
    await lanes.idle();
  });

  it("logs a failing job and runs the next", async () => {
    const lines: string[] = [];
    const logger = pino({ level: "error" }, { write: (line: string) => lines.push(line) });
    const lanes = new HandOverLanes({ maxWaiting: 5, logger });
    let ran = false;
    lanes.enqueue("alice", async () => {
      throw new Error("disk on fire");
    });
    lanes.enqueue("alice", async () => {
      ran = true;
    });
    await lanes.idle();
    expect(ran).toBe(true);
    expect(lines.join("")).toContain("disk on fire");
  });

  it("idle() also waits for jobs queued while it waits", async () => {
    const lanes = new HandOverLanes({ maxWaiting: 5, logger: pino({ level: "silent" }) });
    let last = false;
    lanes.enqueue("alice", async () => {
      lanes.enqueue("bob", async () => {
        last = true;
      });
    });
    await lanes.idle();
    expect(last).toBe(true);
  });
});
