/**
 * HandOverLanes: one sender's jobs run one at a time in order, other lanes beside them, a full
 * lane refuses, a failing job is logged and its lane goes on, and idle() waits for them all; a
 * cancelled lane runs none of its waiting jobs and aborts the running one's signal; drain() waits
 * at most its deadline (on an injected clock), then cancels what is left.
 */
import pino from "pino";
import { describe, expect, it } from "vitest";
import { HandOverLanes } from "../../../src/channels/shared/hand-over-lanes.js";
import { manualClock } from "../../support/manual-clock.js";

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
    expect(lanes.enqueue("alice", () => slow.promise)).toBeDefined();
    expect(lanes.enqueue("alice", async () => {})).toBeDefined();
    expect(lanes.enqueue("alice", async () => {})).toBeUndefined();
    expect(lanes.enqueue("bob", async () => {})).toBeDefined();
    slow.open();
    await lanes.idle();
    expect(lanes.enqueue("alice", async () => {})).toBeDefined();
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

  it("cancel() skips the lane's waiting jobs and aborts the running one's signal", async () => {
    const lanes = new HandOverLanes({ maxWaiting: 5, logger: pino({ level: "silent" }) });
    const slow = gate();
    const started = gate();
    const seen: string[] = [];
    lanes.enqueue("alice", async (signal) => {
      started.open();
      await slow.promise;
      seen.push(signal.aborted ? "first aborted" : "first handed over");
    });
    lanes.enqueue("alice", async () => {
      seen.push("second ran");
    });
    lanes.enqueue("bob", async () => {
      seen.push("bob ran");
    });
    await started.promise;
    expect(lanes.busy("alice")).toBe(true);
    expect(lanes.cancel("alice")).toBe(2);
    expect(lanes.cancel("carol")).toBe(0);
    slow.open();
    await lanes.idle();
    expect(seen.sort()).toEqual(["bob ran", "first aborted"]);
    expect(lanes.busy("alice")).toBe(false);
  });

  it("drain() waits for the lanes until its deadline, then cancels and logs what is left", async () => {
    const lines: string[] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => lines.push(line) });
    const clock = manualClock();
    const lanes = new HandOverLanes({ maxWaiting: 5, logger, stop: { withinMs: 5000, clock } });
    const slow = gate();
    let aborted: boolean | undefined;
    lanes.enqueue("alice", async (signal) => {
      await slow.promise;
      aborted = signal.aborted;
    });
    let waitingRan = false;
    lanes.enqueue("alice", async () => {
      waitingRan = true;
    });
    let drained = false;
    const draining = lanes.drain().then(() => {
      drained = true;
    });
    await Promise.resolve();
    expect(drained).toBe(false);
    clock.fire();
    await draining;
    expect(lines.join("")).toContain('"dropped":2');
    slow.open();
    await lanes.idle();
    expect(aborted).toBe(true);
    expect(waitingRan).toBe(false);
  });

  it("drain() returns as soon as the lanes are empty, logging nothing", async () => {
    const lines: string[] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => lines.push(line) });
    const lanes = new HandOverLanes({ maxWaiting: 5, logger, stop: { clock: manualClock() } });
    lanes.enqueue("alice", async () => {});
    await lanes.drain();
    expect(lines).toEqual([]);
  });

  it("route() answers a command at once when it may or the lane is idle, queues it otherwise, and refuses past a full lane", async () => {
    const lanes = new HandOverLanes({ maxWaiting: 2, logger: pino({ level: "silent" }) });
    const seen: string[] = [];
    const job = (name: string) => async () => {
      seen.push(name);
    };
    expect(await lanes.route("alice", { kind: "command", name: "new", handOver: job("idle new") })).toEqual({
      kind: "answered",
    });
    const slow = gate();
    const message = await lanes.route("alice", {
      kind: "message",
      handOver: async () => {
        await slow.promise;
        seen.push("message");
      },
    });
    expect(message.kind).toBe("queued");
    await lanes.route("alice", { kind: "command", name: "status", handOver: job("status") });
    await lanes.route("alice", { kind: "at-once", handOver: job("usage") });
    const waiting = await lanes.route("alice", { kind: "command", name: "new", handOver: job("busy new") });
    expect(waiting.kind).toBe("queued");
    expect(await lanes.route("alice", { kind: "message", handOver: job("too many") })).toEqual({
      kind: "full",
    });
    expect(seen).toEqual(["idle new", "status", "usage"]);
    slow.open();
    if (waiting.kind === "queued") await waiting.handedOver;
    expect(seen).toEqual(["idle new", "status", "usage", "message", "busy new"]);
  });

  it("route() cancels the sender's lane for their stop and tells it how many it dropped", async () => {
    const lanes = new HandOverLanes({ maxWaiting: 5, logger: pino({ level: "silent" }) });
    const slow = gate();
    const seen: string[] = [];
    await lanes.route("alice", {
      kind: "message",
      handOver: async (signal) => {
        await slow.promise;
        seen.push(signal.aborted ? "message aborted" : "message");
      },
    });
    await lanes.route("alice", { kind: "message", handOver: async () => void seen.push("second") });
    await lanes.route("alice", {
      kind: "stop",
      answer: async (dropped) => void seen.push(`stop ${dropped}`),
    });
    slow.open();
    await lanes.idle();
    expect(seen).toEqual(["stop 2", "message aborted"]);
  });

  it("route() lets a stop drop the sender's waiting messages and /skill but keep their other commands; drain() drops all", async () => {
    const clock = manualClock();
    const lanes = new HandOverLanes({ maxWaiting: 5, logger: pino({ level: "silent" }), stop: { clock } });
    const slow = gate();
    const seen: string[] = [];
    const job = (name: string) => async () => void seen.push(name);
    await lanes.route("alice", { kind: "message", handOver: async () => slow.promise });
    await lanes.route("alice", { kind: "command", name: "new", handOver: job("new") });
    await lanes.route("alice", { kind: "command", name: "skill", handOver: job("skill") });
    await lanes.route("alice", { kind: "message", handOver: job("message") });
    await lanes.route("alice", { kind: "command", name: "mode", handOver: job("mode") });
    await lanes.route("alice", {
      kind: "stop",
      answer: async (dropped) => void seen.push(`stop ${dropped}`),
    });
    slow.open();
    await lanes.idle();
    expect(seen).toEqual(["stop 3", "new", "mode"]);
    const held = gate();
    await lanes.route("bob", { kind: "message", handOver: async () => held.promise });
    await lanes.route("bob", { kind: "command", name: "new", handOver: job("bob's new") });
    const draining = lanes.drain();
    clock.fire();
    held.open();
    await draining;
    await lanes.idle();
    expect(seen).not.toContain("bob's new");
  });
});
