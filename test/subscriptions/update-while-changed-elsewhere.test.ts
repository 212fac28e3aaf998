/**
 * Rewriting a subscription takes store round trips between reading it and writing it: "new" moves
 * a thread's subscriptions to its new session (SubscriptionService.moveSession: each one's read
 * cursor, then its record), and subscribe_channel on one the caller has updates it after checking
 * the bot can read the channel. With two processes on one Redis, whatever another process did to
 * the subscription in between — an unsubscribe, an updated trigger, a move to the channel's new
 * id — must survive: the rewrite is
 * a compare-and-set of the record as stored now, and never names a removed subscription in the
 * catalog again.
 */
import os from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import type { Coordination } from "../../src/store/coordination/coordination.js";
import { createCoordination } from "../../src/store/coordination/create-coordination.js";
import { createStore } from "../../src/store/create-store.js";
import type { KeyValueSpace, Store, StoreNamespace } from "../../src/store/store.js";
import { type RedisServer, startRedisServer } from "../support/redis-server.js";
import { WrappedStore } from "../support/wrapped-store.js";
import { ALICE, type Harness, message, openHarness } from "./support.js";

const ALICE_OWNER = { sessionId: ALICE.sessionId, platform: "slack", userId: "UALICE" };
/** The id #deploys goes by after the platform moved it. */
const NEW_ID = "CDEPLOYNEW";

/** A store whose first read of a read cursor, once `armed`, waits until `release`. */
class HeldCursorStore extends WrappedStore {
  armed = false;
  private go!: () => void;
  private reach!: () => void;
  /** Resolves when the held read began. */
  readonly reached = new Promise<void>((resolve) => {
    this.reach = resolve;
  });
  private readonly gate = new Promise<void>((resolve) => {
    this.go = resolve;
  });

  release(): void {
    this.go();
  }

  protected wrap(namespace: StoreNamespace, inner: KeyValueSpace): KeyValueSpace {
    if (namespace !== "buffers") return inner;
    const get = async (key: string) => {
      if (this.armed && key.startsWith("cursor:")) {
        this.armed = false;
        this.reach();
        await this.gate;
      }
      return inner.get(key);
    };
    return new Proxy(inner, {
      get: (target, prop) => {
        if (prop === "get") return get;
        const value = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  }
}

let redis: RedisServer | undefined;
const open: { harness: Harness; coordination: Coordination }[] = [];

afterEach(async () => {
  for (const { harness, coordination } of open.splice(0)) {
    await harness.close().catch(() => undefined);
    await coordination.close().catch(() => undefined);
  }
  await redis?.stop();
  redis = undefined;
});

/** A process on the Redis at `url`, its store wrapped by `wrap`. */
async function openProcess(url: string, wrap: (store: Store) => Store = (store) => store): Promise<Harness> {
  const store = await createStore({ url, dataDir: os.tmpdir() });
  const coordination = await createCoordination({ url, dataDir: os.tmpdir(), store });
  const harness = await openHarness({
    store: wrap(store),
    settings: { debounceMs: 50, maxWaitMs: 1_000, maxBatch: 1_000 },
    shared: { coordination, reconcileMs: 3_600_000 },
  });
  open.push({ harness, coordination });
  return harness;
}

/** Process A, whose next read of a read cursor waits, and process B. */
async function twoProcesses(): Promise<{ a: Harness; b: Harness; held: HeldCursorStore }> {
  redis = await startRedisServer();
  let held: HeldCursorStore | undefined;
  const a = await openProcess(redis.url, (store) => {
    held = new HeldCursorStore(store);
    return held;
  });
  const b = await openProcess(redis.url);
  return { a, b, held: held! };
}

describe("moving a thread's subscriptions while another process changes them", () => {
  it("a subscription removed through B during A's move stays removed, for every process", async () => {
    const { a, b, held } = await twoProcesses();
    expect(await a.service.subscribe(ALICE, { channel: "#deploys" })).toMatchObject({ ok: true });
    held.armed = true;
    const moving = a.service.moveSession(ALICE.sessionId, "new-session");
    await held.reached; // A has read the subscription and is moving its read cursor
    expect(await b.service.remove(ALICE_OWNER, "#deploys")).toMatchObject({ ok: true });
    held.release();
    await moving;

    expect(await a.service.listFor("new-session")).toEqual([]);
    const c = await openProcess(redis!.url);
    expect(await c.service.listFor("new-session")).toEqual([]);
    expect(await c.service.observe(message("deploy 8 failed"))).toEqual({ status: "ignored" });
  });

  it("a trigger changed through B during A's move is kept, and the subscription moves", async () => {
    const { a, b, held } = await twoProcesses();
    expect(await a.service.subscribe(ALICE, { channel: "#deploys" })).toMatchObject({ ok: true });
    held.armed = true;
    const moving = a.service.moveSession(ALICE.sessionId, "new-session");
    await held.reached;
    expect(
      await b.service.subscribe(ALICE, {
        channel: "#deploys",
        trigger: { type: "keywords", keywords: ["rollback"] },
      }),
    ).toMatchObject({ ok: true });
    held.release();
    await moving;

    const c = await openProcess(redis!.url);
    const [moved, ...others] = await c.service.listFor("new-session");
    expect(others).toEqual([]);
    expect(moved?.trigger).toEqual({ type: "keywords", keywords: ["rollback"] });
    expect(await c.service.listFor(ALICE.sessionId)).toEqual([]);
  });

  it("a subscription removed through B while A updates it stays removed, and A says nothing changed", async () => {
    const { a, b } = await twoProcesses();
    expect(await a.service.subscribe(ALICE, { channel: "#deploys" })).toMatchObject({ ok: true });
    let reached!: () => void;
    const checking = new Promise<void>((resolve) => {
      reached = resolve;
    });
    let go!: () => void;
    const gate = new Promise<void>((resolve) => {
      go = resolve;
    });
    const canRead = a.directory.ensureBotCanRead.bind(a.directory);
    a.directory.ensureBotCanRead = async (channel) => {
      reached();
      await gate;
      return canRead(channel);
    };
    const updating = a.service.subscribe(ALICE, {
      channel: "#deploys",
      trigger: { type: "keywords", keywords: ["rollback"] },
    });
    await checking; // A found the subscription and is checking the bot can read the channel
    expect(await b.service.remove(ALICE_OWNER, "#deploys")).toMatchObject({ ok: true });
    go();
    expect(await updating).toMatchObject({ ok: false, message: expect.stringContaining("nothing changed") });

    const c = await openProcess(redis!.url);
    expect(await c.service.listFor(ALICE.sessionId)).toEqual([]);
    expect(await c.service.observe(message("rollback of deploy 8"))).toEqual({ status: "ignored" });
  });

  it("a subscription moved to the channel's new id by B while A updates it stays there, and A says nothing changed", async () => {
    const { a, b } = await twoProcesses();
    expect(await a.service.subscribe(ALICE, { channel: "#deploys" })).toMatchObject({ ok: true });
    const canRead = a.directory.ensureBotCanRead.bind(a.directory);
    a.directory.ensureBotCanRead = async (channel) => {
      // Meanwhile B learns #deploys goes by a new id and moves the subscription there.
      b.directory.add(NEW_ID, "deploys-now", ["UALICE", "UBOB"]);
      b.directory.renamed.set("CDEPLOY", NEW_ID);
      await b.service.registerDirectory(b.directory);
      return canRead(channel);
    };
    expect(
      await a.service.subscribe(ALICE, {
        channel: "#deploys",
        trigger: { type: "keywords", keywords: ["rollback"] },
      }),
    ).toMatchObject({ ok: false, message: expect.stringContaining("nothing changed") });

    const c = await openProcess(redis!.url);
    expect((await c.service.listFor(ALICE.sessionId)).map((s) => s.channelRef.channel)).toEqual([NEW_ID]);
    expect(await c.service.observe(message("deploy 8 failed", { channel: NEW_ID }))).toMatchObject({
      matched: 1,
    });
  });
});
