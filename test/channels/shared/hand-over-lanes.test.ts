/**
 * HandOverLanes: one sender's jobs run one at a time in order, other lanes beside them, a full
 * lane refuses, a failing job is logged and its lane goes on, a lane left empty takes a command at
 * once again, and drain() waits for jobs queued while it waits; a cancelled lane runs none of its waiting jobs and aborts the running one's signal (not one
 * already handing over); drain() waits at most its deadline (on an injected clock), then cancels
 * what is left and tells each dropped job's sender, for a bounded time, unless the platform
 * delivers the job's message again or its drop's claim loses (handed over elsewhere). A stop with a position cancels only what was sent before it,
 * and its lane's mark drops what was sent before it that comes later; marks are kept for a bounded
 * number of lanes, expired ones forgotten first, and a new lane's stop past the bound keeps none
 * rather than forget another lane's live mark. A stop claims the drops of all it dropped at once
 * (one store round trip, not one per message) and tells their sender once.
 */
import pino from "pino";
import { describe, expect, it } from "vitest";
import {
  droppedNote,
  HandOverLanes,
  type Routed,
  STOPPED_NOTE,
} from "../../../src/channels/shared/hand-over-lanes.js";
import { manualClock } from "../../support/manual-clock.js";

/** A sender nobody needs to tell anything. */
const quiet = async (): Promise<void> => {};

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/**
 * Resolves once each of `queued` (what `enqueue` or `route` returned) has run or was cancelled; at
 * once for what was answered or refused.
 */
async function settled(...queued: readonly (Promise<void> | Routed | undefined)[]): Promise<void> {
  await Promise.all(
    queued.map((entry) =>
      entry instanceof Promise ? entry : entry?.kind === "queued" ? entry.handedOver : undefined,
    ),
  );
}

/** The count the sender's stop, routed through lane `key` (its position unknown), is answered with. */
async function stopped(lanes: HandOverLanes, key: string): Promise<number> {
  const answers: number[] = [];
  await lanes.route(key, { kind: "stop", answer: async (count) => void answers.push(count) });
  expect(answers).toHaveLength(1);
  return answers[0]!;
}

/**
 * Lanes that drain within 5 s on a manual clock (telling senders within `tellWithinMs`, if given),
 * their warnings as written, and what each sender was told through `tell(who)`.
 */
function drainingLanes(tellWithinMs?: number) {
  const lines: string[] = [];
  const logger = pino({ level: "warn" }, { write: (line: string) => lines.push(line) });
  const clock = manualClock();
  const lanes = new HandOverLanes({ maxWaiting: 5, logger, stop: { withinMs: 5000, tellWithinMs, clock } });
  const told: string[] = [];
  const tell = (who: string) => async (text: string) => void told.push(`${who}: ${text}`);
  return { lanes, lines, clock, told, tell };
}

describe("HandOverLanes", () => {
  it("runs a lane's jobs in order, one at a time, and other lanes beside it", async () => {
    const lanes = new HandOverLanes({ maxWaiting: 5, logger: pino({ level: "silent" }) });
    const done: string[] = [];
    const slow = gate();
    const otherRan = gate();
    const first = lanes.enqueue("alice", async () => {
      await slow.promise;
      done.push("alice 1");
    });
    const second = lanes.enqueue("alice", async () => {
      done.push("alice 2");
    });
    const other = lanes.enqueue("bob", async () => {
      done.push("bob 1");
      otherRan.open();
    });
    await otherRan.promise;
    expect(done).toEqual(["bob 1"]);
    slow.open();
    await settled(first, second, other);
    expect(done).toEqual(["bob 1", "alice 1", "alice 2"]);
  });

  it("refuses a job past maxWaiting, and takes one again once the lane has room", async () => {
    const lanes = new HandOverLanes({ maxWaiting: 2, logger: pino({ level: "silent" }) });
    const slow = gate();
    const queued = [lanes.enqueue("alice", () => slow.promise), lanes.enqueue("alice", async () => {})];
    expect(queued).toEqual([expect.any(Promise), expect.any(Promise)]);
    expect(lanes.enqueue("alice", async () => {})).toBeUndefined();
    const bobs = lanes.enqueue("bob", async () => {});
    expect(bobs).toBeDefined();
    slow.open();
    await settled(...queued, bobs);
    const again = lanes.enqueue("alice", async () => {});
    expect(again).toBeDefined();
    await settled(again);
  });

  it("logs a failing job and runs the next", async () => {
    const lines: string[] = [];
    const logger = pino({ level: "error" }, { write: (line: string) => lines.push(line) });
    const lanes = new HandOverLanes({ maxWaiting: 5, logger });
    let ran = false;
    lanes.enqueue("alice", async () => {
      throw new Error("disk on fire");
    });
    const next = lanes.enqueue("alice", async () => {
      ran = true;
    });
    await settled(next);
    expect(ran).toBe(true);
    expect(lines.join("")).toContain("disk on fire");
  });

  it("drain() also waits for jobs queued while it waits, logging nothing once they are done", async () => {
    const { lanes, lines, clock } = drainingLanes();
    const first = gate();
    const second = gate();
    let last = false;
    lanes.enqueue("alice", async () => {
      await first.promise;
      lanes.enqueue("bob", async () => {
        await second.promise;
        last = true;
      });
    });
    const draining = lanes.drain();
    first.open();
    await new Promise((resolve) => setImmediate(resolve));
    expect(last).toBe(false);
    expect(clock.pending()).toBe(1);
    second.open();
    await draining;
    expect(last).toBe(true);
    expect(clock.pending()).toBe(0);
    expect(lines).toEqual([]);
  });

  it("a stop skips the lane's waiting jobs and aborts the running one's signal", async () => {
    const lanes = new HandOverLanes({ maxWaiting: 5, logger: pino({ level: "silent" }) });
    const slow = gate();
    const started = gate();
    const seen: string[] = [];
    const queued = [
      lanes.enqueue("alice", async (signal) => {
        started.open();
        await slow.promise;
        seen.push(signal.handingOver() ? "first handed over" : "first aborted");
      }),
      lanes.enqueue("alice", async () => {
        seen.push("second ran");
      }),
      lanes.enqueue("bob", async () => {
        seen.push("bob ran");
      }),
    ];
    await started.promise;
    expect(await stopped(lanes, "alice")).toBe(2);
    expect(await stopped(lanes, "carol")).toBe(0);
    slow.open();
    await settled(...queued);
    expect(seen.sort()).toEqual(["bob ran", "first aborted"]);
    // Her lane, empty again, takes her command at once.
    const command = await lanes.route("alice", {
      kind: "command",
      name: "new",
      tell: quiet,
      handOver: async () => void seen.push("new"),
    });
    expect(command).toEqual({ kind: "answered" });
  });

  it("drain() waits for the lanes until its deadline, then cancels and logs what is left", async () => {
    const { lanes, lines, clock } = drainingLanes();
    const slow = gate();
    let aborted: boolean | undefined;
    const running = lanes.enqueue("alice", async (signal) => {
      await slow.promise;
      aborted = !signal.handingOver();
    });
    let waitingRan = false;
    const waiting = lanes.enqueue("alice", async () => {
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
    await settled(running, waiting);
    expect(aborted).toBe(true);
    expect(waitingRan).toBe(false);
  });

  it("drain() tells the sender of each job it dropped, waiting or running, but not of one already handing over", async () => {
    const { lanes, lines, clock, told, tell } = drainingLanes();
    const reading = gate();
    const receiving = gate();
    const inReceive = gate();
    let received = false;
    // Alice's file is still being read; her next message waits behind it.
    const alices = await lanes.route("alice", {
      kind: "message",
      tell: tell("alice 1"),
      handOver: async (signal) => {
        await reading.promise;
        if (signal.handingOver()) received = true;
      },
    });
    await lanes.route("alice", { kind: "message", tell: tell("alice 2"), handOver: quiet });
    await lanes.route("alice", { kind: "command", name: "new", tell: tell("alice new"), handOver: quiet });
    // Bob's message is being recorded already: the stop cannot take it back.
    const bobs = await lanes.route("bob", {
      kind: "message",
      tell: tell("bob"),
      handOver: async (signal) => {
        if (!signal.handingOver()) return;
        inReceive.open();
        await receiving.promise;
      },
    });
    await inReceive.promise;
    // Carol stopped before the channel did: she was told by her stop, not again.
    await lanes.route("carol", { kind: "message", tell: tell("carol"), handOver: () => reading.promise });
    await lanes.route("carol", { kind: "stop", answer: async () => {} });
    const draining = lanes.drain();
    clock.fire();
    await draining;
    expect(told.sort()).toEqual([
      `alice 1: ${STOPPED_NOTE}`,
      `alice 2: ${STOPPED_NOTE}`,
      `alice new: ${STOPPED_NOTE}`,
    ]);
    expect(lines.join("")).toContain('"dropped":3,"redelivered":0,"told":3');
    reading.open();
    receiving.open();
    await settled(alices, bobs);
    expect(received).toBe(false);
  });

  it("drain() does not tell the sender of a message the platform delivers again", async () => {
    const { lanes, lines, clock, told, tell } = drainingLanes();
    const held = gate();
    await lanes.route("alice", {
      kind: "message",
      tell: tell("alice"),
      redelivered: () => true,
      handOver: () => held.promise,
    });
    await lanes.route("alice", {
      kind: "command",
      name: "new",
      tell: tell("alice new"),
      redelivered: () => false,
      handOver: quiet,
    });
    const draining = lanes.drain();
    clock.fire(5000);
    await draining;
    expect(told).toEqual([`alice new: ${STOPPED_NOTE}`]);
    expect(lines.join("")).toContain('"dropped":2,"redelivered":1,"told":1,"allTold":true');
    held.open();
  });

  it("drain() tells only the dropped whose claim wins, claims none the platform delivers again, and tells one whose claim fails", async () => {
    const { lanes, lines, clock, told, tell } = drainingLanes();
    const held = gate();
    const claimed: string[] = [];
    const claim = (who: string, answer: boolean | Error) => async () => {
      claimed.push(who);
      if (answer instanceof Error) throw answer;
      return answer;
    };
    // Handed over by another process (a Slack post's twin): its resend would be a second turn.
    await lanes.route("ana", {
      kind: "message",
      tell: tell("ana"),
      claimDrop: claim("ana", false),
      handOver: () => held.promise,
    });
    await lanes.route("bob", {
      kind: "message",
      tell: tell("bob"),
      claimDrop: claim("bob", true),
      handOver: () => held.promise,
    });
    await lanes.route("cy", {
      kind: "message",
      tell: tell("cy"),
      claimDrop: claim("cy", new Error("store down")),
      handOver: () => held.promise,
    });
    // Delivered again by the platform: never claimed, or its redelivery would be discarded.
    await lanes.route("dee", {
      kind: "message",
      tell: tell("dee"),
      redelivered: () => true,
      claimDrop: claim("dee", true),
      handOver: () => held.promise,
    });
    const draining = lanes.drain();
    clock.fire(5000);
    await draining;
    expect(claimed.sort()).toEqual(["ana", "bob", "cy"]);
    expect(told.sort()).toEqual([`bob: ${STOPPED_NOTE}`, `cy: ${STOPPED_NOTE}`]);
    expect(lines.join("")).toContain(
      '"dropped":4,"redelivered":1,"told":2,"allTold":true,"handedOverElsewhere":1',
    );
    held.open();
  });

  it("drain() stops waiting for the senders' notes after tellWithinMs", async () => {
    const { lanes, lines, clock } = drainingLanes(2000);
    const held = gate();
    const telling = gate();
    const never = (): Promise<void> => {
      telling.open();
      return new Promise<void>(() => {});
    };
    await lanes.route("alice", { kind: "message", tell: never, handOver: () => held.promise });
    const draining = lanes.drain();
    clock.fire(5000);
    await telling.promise;
    expect(clock.pending(2000)).toBe(1);
    clock.fire(2000);
    await draining;
    expect(lines.join("")).toContain('"dropped":1,"redelivered":0,"told":0,"allTold":false');
    held.open();
  });

  it("a stop does not count a job already handing over", async () => {
    const lanes = new HandOverLanes({ maxWaiting: 5, logger: pino({ level: "silent" }) });
    const recording = gate();
    const inReceive = gate();
    const recorded = lanes.enqueue("alice", async (signal) => {
      if (!signal.handingOver()) return;
      inReceive.open();
      await recording.promise;
    });
    await inReceive.promise;
    expect(await stopped(lanes, "alice")).toBe(0);
    recording.open();
    await settled(recorded);
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
    expect(
      await lanes.route("alice", { kind: "command", name: "new", tell: quiet, handOver: job("idle new") }),
    ).toEqual({
      kind: "answered",
    });
    const slow = gate();
    const message = await lanes.route("alice", {
      kind: "message",
      tell: quiet,
      handOver: async () => {
        await slow.promise;
        seen.push("message");
      },
    });
    expect(message.kind).toBe("queued");
    await lanes.route("alice", { kind: "command", name: "status", tell: quiet, handOver: job("status") });
    await lanes.route("alice", { kind: "at-once", handOver: job("usage") });
    const waiting = await lanes.route("alice", {
      kind: "command",
      name: "new",
      tell: quiet,
      handOver: job("busy new"),
    });
    expect(waiting.kind).toBe("queued");
    expect(await lanes.route("alice", { kind: "message", tell: quiet, handOver: job("too many") })).toEqual({
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
    const first = await lanes.route("alice", {
      kind: "message",
      tell: quiet,
      handOver: async (signal) => {
        await slow.promise;
        seen.push(signal.handingOver() ? "message" : "message aborted");
      },
    });
    const second = await lanes.route("alice", {
      kind: "message",
      tell: quiet,
      handOver: async () => void seen.push("second"),
    });
    await lanes.route("alice", {
      kind: "stop",
      answer: async (dropped) => void seen.push(`stop ${dropped}`),
    });
    slow.open();
    await settled(first, second);
    expect(seen).toEqual(["stop 2", "message aborted"]);
  });

  it("route() lets a stop drop the sender's waiting messages and /skill but keep their other commands; drain() drops all", async () => {
    const clock = manualClock();
    const lanes = new HandOverLanes({ maxWaiting: 5, logger: pino({ level: "silent" }), stop: { clock } });
    const slow = gate();
    const seen: string[] = [];
    const job = (name: string) => async () => void seen.push(name);
    const alices = [
      await lanes.route("alice", { kind: "message", tell: quiet, handOver: async () => slow.promise }),
      await lanes.route("alice", { kind: "command", name: "new", tell: quiet, handOver: job("new") }),
      await lanes.route("alice", { kind: "command", name: "skill", tell: quiet, handOver: job("skill") }),
      await lanes.route("alice", { kind: "message", tell: quiet, handOver: job("message") }),
      await lanes.route("alice", { kind: "command", name: "mode", tell: quiet, handOver: job("mode") }),
    ];
    await lanes.route("alice", {
      kind: "stop",
      answer: async (dropped) => void seen.push(`stop ${dropped}`),
    });
    slow.open();
    await settled(...alices);
    expect(seen).toEqual(["stop 3", "new", "mode"]);
    const held = gate();
    const bobs = [
      await lanes.route("bob", { kind: "message", tell: quiet, handOver: async () => held.promise }),
      await lanes.route("bob", { kind: "command", name: "new", tell: quiet, handOver: job("bob's new") }),
    ];
    const draining = lanes.drain();
    clock.fire();
    held.open();
    await draining;
    await settled(...bobs);
    expect(seen).not.toContain("bob's new");
  });

  /** How many lanes' stop marks the lanes keep, and for how long (lane-stop-marks.ts). */
  const MAX_MARKS = 10_000;
  const MARK_MS = 10 * 60_000;

  /** Lanes reading time from `now`, their warnings as written, and what a message sent at 100 meets. */
  function markedLanes(now: () => number = () => 0) {
    const lines: string[] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => lines.push(line) });
    const lanes = new HandOverLanes({
      maxWaiting: 5,
      logger,
      stop: { clock: { ...manualClock(), now } },
    });
    const told: string[] = [];
    /** Whether a message sent at 100 in lane `key` is handed over; its sender's notes go to `told`. */
    const sentBefore = async (key: string) => {
      let handedOver = false;
      const routed = await lanes.route(key, {
        kind: "message",
        position: 100,
        tell: async (text) => void told.push(`${key}: ${text}`),
        handOver: async (signal) => {
          handedOver = signal.handingOver();
        },
      });
      if (routed.kind === "queued") await routed.handedOver;
      return handedOver;
    };
    return { lanes, lines, told, sentBefore };
  }

  it("with maxMarks lanes' marks live, a new lane's stop keeps none (logged), and no live mark is forgotten for it", async () => {
    const { lanes, lines, told, sentBefore } = markedLanes();
    // Ana's stop, then another sender's flood of stops, each a lane of its own (top-level Slack stops).
    await lanes.route("ana", { kind: "stop", position: 150, answer: quiet });
    for (let lane = 1; lane <= MAX_MARKS; lane++)
      await lanes.route(`flood ${lane}`, { kind: "stop", position: 150, answer: quiet });

    expect(await sentBefore("ana")).toBe(false);
    expect(await sentBefore(`flood ${MAX_MARKS - 1}`)).toBe(false);
    expect(await sentBefore(`flood ${MAX_MARKS}`)).toBe(true);
    expect(told).toEqual([`ana: ${droppedNote(1)}`, `flood ${MAX_MARKS - 1}: ${droppedNote(1)}`]);
    expect(lines.filter((line) => line.includes("this stop keeps no mark"))).toHaveLength(1);
    // A lane already marked is refreshed even so.
    await lanes.route("ana", { kind: "stop", position: 160, answer: quiet });
    expect(await sentBefore("ana")).toBe(false);
    expect(lines.filter((line) => line.includes("this stop keeps no mark"))).toHaveLength(1);
  });

  it("a new lane's stop forgets the expired marks to keep its own", async () => {
    let now = 0;
    const { lanes, lines, sentBefore } = markedLanes(() => now);
    for (let lane = 0; lane < MAX_MARKS; lane++)
      await lanes.route(`lane ${lane}`, { kind: "stop", position: 150, answer: quiet });
    now += MARK_MS;
    await lanes.route("late", { kind: "stop", position: 150, answer: quiet });

    expect(await sentBefore("late")).toBe(false);
    expect(await sentBefore("lane 0")).toBe(true);
    expect(lines.filter((line) => line.includes("this stop keeps no mark"))).toEqual([]);
  });

  it("a stop tells of the messages it dropped only once it claims their drop, and a late one likewise", async () => {
    const lanes = new HandOverLanes({ maxWaiting: 5, logger: pino({ level: "silent" }) });
    const reading = gate();
    const claimed: string[] = [];
    const claim = (id: string, answer: boolean | Error) => async () => {
      claimed.push(id);
      if (answer instanceof Error) throw answer;
      return answer;
    };
    const ran: string[] = [];
    const message = (id: string, answer: boolean | Error, position: number) =>
      lanes.route("alice", {
        kind: "message",
        position,
        tell: quiet,
        claimDrop: claim(id, answer),
        handOver: async (signal) => {
          await reading.promise;
          if (signal.handingOver()) ran.push(id);
        },
      });
    // Her twin read elsewhere and told there, one not, one whose claim fails (told, to be safe).
    const queued = [
      await message("twin told elsewhere", false, 100),
      await message("mine", true, 110),
      await message("unknown", new Error("store unreachable"), 120),
    ];
    const answers: number[] = [];
    await lanes.route("alice", { kind: "stop", position: 150, answer: async (n) => void answers.push(n) });
    reading.open();
    await settled(...queued);
    expect(answers).toEqual([2]);
    expect(claimed).toEqual(["twin told elsewhere", "mine", "unknown"]);

    // Late, sent before the stop: a retry of one handed over elsewhere is dropped without a word.
    const told: string[] = [];
    for (const [id, answer] of [
      ["retry handed over elsewhere", false],
      ["late", true],
    ] as const) {
      const routed = await lanes.route("alice", {
        kind: "message",
        position: 130,
        tell: async (text) => void told.push(`${id}: ${text}`),
        claimDrop: claim(id, answer),
        handOver: async () => void ran.push(id),
      });
      if (routed.kind === "queued") await routed.handedOver;
    }
    expect(told).toEqual([`late: ${droppedNote(1)}`]);
    expect(ran).toEqual([]);
  });
  it("a stop dropping several messages claims their drops all at once, and tells their sender once", async () => {
    const lanes = new HandOverLanes({ maxWaiting: 5, logger: pino({ level: "silent" }) });
    const reading = gate();
    const claims: string[] = [];
    const store = gate();
    const told: string[] = [];
    /** Message `id` of the sender of lane `key`, still being read, whose drop's claim waits for the store. */
    const message = (key: string, id: string) =>
      lanes.route(key, {
        kind: "message",
        tell: async (text) => void told.push(`${key}: ${text}`),
        claimDrop: async () => {
          claims.push(id);
          await store.promise;
          return true;
        },
        handOver: async () => reading.promise,
      });
    const queued: Routed[] = [];
    for (const id of ["one", "two", "three"]) queued.push(await message("alice", id));
    const answers: number[] = [];
    const answered = lanes.route("alice", { kind: "stop", answer: async (n) => void answers.push(n) });
    // Every claim is on its way before the store answers any: one round trip, not one per message.
    await new Promise((resolve) => setImmediate(resolve));
    expect(claims).toEqual(["one", "two", "three"]);
    store.open();
    await answered;
    expect(answers).toEqual([3]);

    // The same stop taken in another process: this one tells her once, of all three.
    claims.length = 0;
    for (const id of ["four", "five", "six"]) queued.push(await message("bob", id));
    await lanes.stoppedElsewhere("bob", undefined);
    expect(claims).toEqual(["four", "five", "six"]);
    expect(told).toEqual([`bob: ${droppedNote(3)}`]);
    reading.open();
    await settled(...queued);
  });
});
