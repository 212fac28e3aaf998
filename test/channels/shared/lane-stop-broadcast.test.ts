/**
 * LaneStopBroadcast: two processes' hand-over lanes on one real redis-server (each with its own
 * coordination, as two processes have). A stop taken by B drops the message A is still reading
 * (never handed over) and A's sender is told what was dropped, while B answers its stop with its
 * own count; commands a stop keeps are kept; an announcement reaching A after its job began
 * handing over changes nothing; an unreadable announcement is logged and ignored; a process
 * skips its own announcements. A stop names its position in the sender's stream: A cancels only
 * what was sent before it (a message sent after the stop, already in A, is kept), and a message
 * sent before it that reaches A only after the announcement is dropped, its sender told, until
 * the lane's mark expires. The lanes run the broadcast they are given: `listen` hears the other
 * processes' stops, and once drained they are no longer heard.
 *
 * Waiting for an announcement to arrive is done on what arrives after it: Redis delivers one
 * connection's publishes in order, so once a later announcement from the same coordination was
 * heard, the earlier one was handled.
 */
import os from "node:os";
import pino from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  droppedNote,
  HandOverLanes,
  type LaneEntry,
  type Routed,
} from "../../../src/channels/shared/hand-over-lanes.js";
import { LaneStopBroadcast, laneStopChannel } from "../../../src/channels/shared/lane-stop-broadcast.js";
import type { Coordination } from "../../../src/store/coordination/coordination.js";
import { createCoordination } from "../../../src/store/coordination/create-coordination.js";
import { createStore } from "../../../src/store/create-store.js";
import type { Store } from "../../../src/store/store.js";
import { manualClock } from "../../support/manual-clock.js";
import { type RedisServer, startRedisServer } from "../../support/redis-server.js";

const ALICE = "C1:1700000000.000100:U_ALICE";
const BOB = "C1:1700000000.000200:U_BOB";

/** Every gate a test made, opened after it so no job is left waiting. */
const gates: (() => void)[] = [];

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  gates.push(open);
  return { promise, open };
}

/** One process's lanes, listening on `coordination`: what its senders were told, and its log lines. */
interface Process {
  readonly lanes: HandOverLanes;
  readonly broadcast: LaneStopBroadcast;
  /** Per lane key, what its sender was told here. */
  readonly told: Map<string, string[]>;
  /** Resolves once the sender of `key` was told something here. */
  toldIn(key: string): Promise<void>;
  /** What the sender of `key` is told through (a message's `tell`). */
  tell(key: string): (text: string) => Promise<void>;
  readonly lines: string[];
}

/** Resolves once each of `routed` has been handed over or cancelled (at once when answered or refused). */
async function settled(...routed: readonly Routed[]): Promise<void> {
  await Promise.all(routed.map((entry) => (entry.kind === "queued" ? entry.handedOver : undefined)));
}

describe("LaneStopBroadcast", () => {
  let redis: RedisServer;
  let store: Store;
  const coordinations: Coordination[] = [];
  const opened: Process[] = [];

  beforeAll(async () => {
    redis = await startRedisServer();
    store = await createStore({ url: redis.url, dataDir: os.tmpdir() });
  }, 20_000);

  afterEach(async () => {
    for (const open of gates.splice(0)) open();
    // A drain waits for the lanes to empty (the gates are open), then closes their broadcast.
    for (const side of opened.splice(0)) await side.lanes.drain();
    for (const coordination of coordinations.splice(0)) await coordination.close();
  });

  afterAll(async () => {
    await store?.close();
    await redis?.stop();
  });

  const coordination = async (): Promise<Coordination> => {
    const opened = await createCoordination({ url: redis.url, dataDir: os.tmpdir(), store });
    coordinations.push(opened);
    return opened;
  };

  /** One process's lanes on `on`, its time read from `now` when given. */
  const processOn = async (on: Coordination, now?: () => number): Promise<Process> => {
    const lines: string[] = [];
    const logger = pino({ level: "info" }, { write: (line: string) => lines.push(line) });
    const broadcast = new LaneStopBroadcast({ coordination: on, platform: "slack", logger });
    const stop = now ? { stop: { clock: { ...manualClock(), now } } } : {};
    const lanes = new HandOverLanes({ maxWaiting: 5, logger, stopsElsewhere: broadcast, ...stop });
    await lanes.listen();
    const told = new Map<string, string[]>();
    const waiting = new Map<string, () => void>();
    const toldIn = (key: string) => {
      const { promise, open } = gate();
      waiting.set(key, open);
      return promise;
    };
    const tell = (key: string) => async (text: string) => {
      told.set(key, [...(told.get(key) ?? []), text]);
      waiting.get(key)?.();
    };
    const side = { lanes, broadcast, told, toldIn, tell, lines };
    opened.push(side);
    return side;
  };

  /**
   * A message of `key` routed to `side`, whose file is being read until `release` is called:
   * `routed` is how its lane took it, `outcome.handedOver` whether it was handed over.
   */
  const beingRead = async (side: Process, key: string, position?: number) => {
    const reading = gate();
    const started = gate();
    const outcome: { handedOver: boolean | undefined } = { handedOver: undefined };
    const routed = await side.lanes.route(key, {
      kind: "message",
      position,
      tell: side.tell(key),
      handOver: async (signal) => {
        started.open();
        await reading.promise;
        outcome.handedOver = signal.handingOver();
      },
    });
    await started.promise;
    return { routed, outcome, release: reading.open };
  };

  /** A stop (at `position` when given), recording the count it is answered with. */
  const stop = (answers: number[], position?: number): LaneEntry => ({
    kind: "stop",
    position,
    answer: async (dropped) => void answers.push(dropped),
  });

  /** A message of `key` at `position` routed to `side`, no file to read: whether it was handed over once settled. */
  const sent = async (side: Process, key: string, position: number): Promise<boolean> => {
    let handedOver = false;
    const routed = await side.lanes.route(key, {
      kind: "message",
      position,
      tell: side.tell(key),
      handOver: async (signal) => {
        handedOver = signal.handingOver();
      },
    });
    if (routed.kind === "queued") await routed.handedOver;
    return handedOver;
  };

  /**
   * Alice's stop at `position` taken by B, waited for until A handled it: Bob's message is read in
   * A and his stop announced after hers, so once A told him, her announcement was handled.
   */
  const alicesStopHeardIn = async (a: Process, b: Process, position: number): Promise<void> => {
    const bobs = await beingRead(a, BOB);
    const toldBob = a.toldIn(BOB);
    await b.lanes.route(ALICE, stop([], position));
    await b.lanes.route(BOB, stop([]));
    await toldBob;
    bobs.release();
  };

  /** Alice's stop taken by `taker`, waited for until `teller` told her something: the counts `taker` answered it with. */
  const alicesStop = async (taker: Process, teller: Process): Promise<number[]> => {
    const told = teller.toldIn(ALICE);
    const answers: number[] = [];
    await taker.lanes.route(ALICE, stop(answers));
    await told;
    return answers;
  };

  it("a stop taken by B drops the message A is still reading, and A tells its sender one was dropped", async () => {
    const a = await processOn(await coordination());
    const b = await processOn(await coordination());
    const file = await beingRead(a, ALICE);

    const answers = await alicesStop(b, a);
    file.release();
    if (file.routed.kind === "queued") await file.routed.handedOver;

    expect(file.routed.kind).toBe("queued");
    expect(file.outcome.handedOver).toBe(false);
    expect(a.told.get(ALICE)).toEqual([droppedNote(1)]);
    // B took the stop: it answers it with what it dropped itself (nothing), and tells no one more.
    expect(answers).toEqual([0]);
    expect(b.told.size).toBe(0);
  });

  it("B's stop answers with B's own count; A drops its waiting message and /skill, keeps /new, and says how many it dropped", async () => {
    const a = await processOn(await coordination());
    const b = await processOn(await coordination());
    const first = await beingRead(a, ALICE);
    const ran: string[] = [];
    const queue = (name: string): LaneEntry =>
      name === "message"
        ? { kind: "message", tell: a.tell(ALICE), handOver: async () => void ran.push(name) }
        : { kind: "command", name, tell: a.tell(ALICE), handOver: async () => void ran.push(name) };
    const queued = [
      await a.lanes.route(ALICE, queue("message")),
      await a.lanes.route(ALICE, queue("new")),
      await a.lanes.route(ALICE, queue("skill")),
    ];
    const inB = await beingRead(b, ALICE);

    const answers = await alicesStop(b, a);
    first.release();
    inB.release();
    await settled(first.routed, inB.routed, ...queued);

    expect(answers).toEqual([1]);
    expect(inB.outcome.handedOver).toBe(false);
    expect(first.outcome.handedOver).toBe(false);
    expect(ran).toEqual(["new"]);
    expect(a.told.get(ALICE)).toEqual([droppedNote(3)]);
  });

  it("an announcement reaching A after its job began handing over changes nothing, and tells nobody", async () => {
    const a = await processOn(await coordination());
    const onB = await coordination();
    const b = await processOn(onB);
    const recording = gate();
    const inReceive = gate();
    let received = false;
    const routed = await a.lanes.route(ALICE, {
      kind: "message",
      tell: a.tell(ALICE),
      handOver: async (signal) => {
        if (!signal.handingOver()) return;
        inReceive.open();
        await recording.promise;
        received = true;
      },
    });
    await inReceive.promise;
    // Bob's message waits in A too: once his stop (announced after Alice's) is heard, hers was.
    await beingRead(a, BOB);
    const toldBob = a.toldIn(BOB);

    const answers: number[] = [];
    await b.lanes.route(ALICE, stop(answers));
    await b.lanes.route(BOB, stop(answers));
    await toldBob;
    recording.open();
    if (routed.kind === "queued") await routed.handedOver;

    expect(routed.kind).toBe("queued");
    expect(received).toBe(true);
    expect(a.told.get(ALICE)).toBeUndefined();
    expect(a.told.get(BOB)).toEqual([droppedNote(1)]);
    expect(a.lines.filter((line) => line.includes("cancelled by a stop taken elsewhere"))).toHaveLength(1);
  });

  it("an unreadable announcement is logged and ignored", async () => {
    const a = await processOn(await coordination());
    const onB = await coordination();
    const alices = await beingRead(a, ALICE);
    // Bob's message waits in A too: once his lane's announcement (published after the others) is heard, they were.
    await beingRead(a, BOB);
    const toldBob = a.toldIn(BOB);

    const channel = laneStopChannel("slack");
    for (const malformed of [
      ALICE,
      JSON.stringify({ lane: ALICE }),
      JSON.stringify({ from: "b", lanes: [ALICE] }),
      JSON.stringify({ from: "b", lane: { key: ALICE } }),
      JSON.stringify({ from: "b", lane: "" }),
      JSON.stringify({ from: "b", lane: ALICE, position: -1 }),
      JSON.stringify({ from: "b", lane: ALICE, position: "150" }),
      JSON.stringify({ from: "b", lane: ALICE, position: 1.5 }),
    ])
      await onB.publish(channel, malformed);
    // The next readable one, from the same connection, comes after them.
    await onB.publish(channel, JSON.stringify({ from: "b", lane: BOB }));
    await toldBob;
    alices.release();
    if (alices.routed.kind === "queued") await alices.routed.handedOver;

    expect(alices.outcome.handedOver).toBe(true);
    expect(a.told.get(ALICE)).toBeUndefined();
    expect(
      a.lines.filter((line) => line.includes("ignoring an unreadable lane-stop announcement")),
    ).toHaveLength(8);
  });

  it("a process skips its own announcement: a message sent after the stop is not dropped by its echo", async () => {
    const onB = await coordination();
    const b = await processOn(onB);
    const answers: number[] = [];
    await b.lanes.route(ALICE, stop(answers));
    const after = await beingRead(b, ALICE);
    // Bob's message waits in B: an announcement of his lane, published after B's own, is heard after it.
    await beingRead(b, BOB);
    const toldBob = b.toldIn(BOB);
    await onB.publish(laneStopChannel("slack"), JSON.stringify({ from: "another process", lane: BOB }));
    await toldBob;
    after.release();
    if (after.routed.kind === "queued") await after.routed.handedOver;

    expect(answers).toEqual([0]);
    expect(after.outcome.handedOver).toBe(true);
    expect(b.told.get(ALICE)).toBeUndefined();
  });

  it("a stop taken by B cancels in A only what Alice sent before it: her message sent after it is handed over", async () => {
    const a = await processOn(await coordination());
    const b = await processOn(await coordination());
    const before = await beingRead(a, ALICE, 100);
    const after = sent(a, ALICE, 200);

    const answers: number[] = [];
    const told = a.toldIn(ALICE);
    await b.lanes.route(ALICE, stop(answers, 150));
    await told;
    before.release();

    expect(await after).toBe(true);
    expect(before.outcome.handedOver).toBe(false);
    expect(a.told.get(ALICE)).toEqual([droppedNote(1)]);
    expect(answers).toEqual([0]);
  });

  it("a message Alice sent before her stop that reaches A after B announced it is dropped, and she is told", async () => {
    const a = await processOn(await coordination());
    const b = await processOn(await coordination());
    await alicesStopHeardIn(a, b, 150);

    expect(await sent(a, ALICE, 100)).toBe(false);
    expect(a.told.get(ALICE)).toEqual([droppedNote(1)]);
    // What she sent after the stop goes through, and a command the stop keeps too.
    expect(await sent(a, ALICE, 200)).toBe(true);
    const ran: string[] = [];
    const command = await a.lanes.route(ALICE, {
      kind: "command",
      name: "new",
      position: 120,
      tell: a.tell(ALICE),
      handOver: async () => void ran.push("new"),
    });
    await settled(command);
    expect(ran).toEqual(["new"]);
    expect(a.told.get(ALICE)).toEqual([droppedNote(1)]);
  });

  it("the mark a stop leaves in A expires: a message sent before it comes through once the mark's time (10 minutes by default) has passed", async () => {
    let now = 1_000_000;
    const a = await processOn(await coordination(), () => now);
    const b = await processOn(await coordination());
    await alicesStopHeardIn(a, b, 150);

    now += 10 * 60_000 - 1;
    expect(await sent(a, ALICE, 100)).toBe(false);
    now += 1;
    expect(await sent(a, ALICE, 101)).toBe(true);
    expect(a.told.get(ALICE)).toEqual([droppedNote(1)]);
  });

  it("lanes drained no longer hear the other processes' stops: a message read after it is handed over", async () => {
    const onA = await coordination();
    const a = await processOn(onA);
    const b = await processOn(await coordination());
    await a.lanes.drain();
    const file = await beingRead(a, ALICE);
    // Heard on A's own connection: once this listener has the announcement, A's would have had it.
    let heard!: () => void;
    const delivered = new Promise<void>((resolve) => {
      heard = resolve;
    });
    const unsubscribe = await onA.subscribe(laneStopChannel("slack"), () => heard());

    await b.lanes.route(ALICE, stop([]));
    await delivered;
    await unsubscribe();
    file.release();
    if (file.routed.kind === "queued") await file.routed.handedOver;

    expect(file.outcome.handedOver).toBe(true);
    expect(a.told.get(ALICE)).toBeUndefined();
  });
});
