/**
 * SubscriptionRegistry on a shared catalog, with two or three registries standing for processes
 * on one store and one coordination (the in-process one: its shared map and pub/sub behave as
 * Redis's do for them). Announced changes reach the other registries; a lost announcement is
 * repaired by `refresh` and by the periodic reconciliation; concurrent adds both land; a stale
 * copy neither wakes a removed subscription nor leaves a wake marker behind; unreadable records
 * are reported once; a single process's catalog record is moved into the shared map. The
 * single-process catalog stays one record and `refresh` costs it nothing.
 */
import os from "node:os";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InProcessCoordination } from "../../src/store/coordination/in-process-coordination.js";
import { createStore } from "../../src/store/create-store.js";
import type { KeyValueSpace, Store } from "../../src/store/store.js";
import { spaceLike } from "../support/space-like.js";
import type { Clock } from "../../src/core/clock.js";
import { SharedCatalog } from "../../src/subscriptions/shared-catalog.js";
import type { Subscription } from "../../src/subscriptions/subscription.js";
import { LocalCatalog } from "../../src/subscriptions/subscription-catalog.js";
import { SubscriptionRegistry } from "../../src/subscriptions/subscription-registry.js";
import { readWokenMany, wokenKey } from "../../src/subscriptions/wake-markers.js";
import { eventually } from "../support/eventually.js";
import { HOME, type LossyCoordination, lossy } from "./support.js";

const DEPLOYS = "slack:T1:CDEPLOY";

/** A valid subscription of session `n` to #deploys. */
function subscription(n: number, overrides: Partial<Subscription> = {}): Subscription {
  return {
    id: `sub_${n.toString(16).padStart(12, "0")}`,
    sessionId: `slack:T1:CHOME:${n}`,
    subscriberTarget: HOME,
    channelRef: { platform: "slack", workspace: "T1", channel: "CDEPLOY", name: "#deploys" },
    trigger: { type: "all" },
    createdAt: new Date(Date.UTC(2026, 10, 30, 9, 0, n)).toISOString(),
    createdBy: { id: "UALICE", name: "Alice" },
    ...overrides,
  };
}

/** A registry on a single process's catalog in `space`, throwing whatever it reports. */
function singleProcessRegistry(space: KeyValueSpace): Promise<SubscriptionRegistry> {
  return SubscriptionRegistry.open(space, {
    catalog: new LocalCatalog(space),
    onError: (error) => {
      throw error;
    },
  });
}

/** A clock whose timers run only when the test fires them. */
function manualClock(): { clock: Clock; delays: number[]; fire(): void } {
  const timers = new Set<() => void>();
  const delays: number[] = [];
  return {
    clock: {
      now: () => Date.now(),
      setTimer(callback, ms) {
        timers.add(callback);
        delays.push(ms);
        return callback;
      },
      clearTimer(handle) {
        timers.delete(handle as () => void);
      },
    },
    delays,
    fire() {
      const due = [...timers];
      timers.clear();
      for (const callback of due) callback();
    },
  };
}

/** One "process": a registry on the shared store, with what it reported. */
interface Process {
  readonly registry: SubscriptionRegistry;
  readonly gone: string[];
  readonly errors: string[];
}

describe("SubscriptionRegistry on a shared catalog", () => {
  let store: Store;
  let space: KeyValueSpace;
  let coordination: InProcessCoordination;
  let opened: SubscriptionRegistry[];

  beforeEach(async () => {
    store = await createStore({ url: "memory:", dataDir: os.tmpdir() });
    space = store.space("subscriptions");
    coordination = new InProcessCoordination(store);
    opened = [];
  });

  afterEach(async () => {
    for (const registry of opened) await registry.close();
    await coordination.close();
    await store.close();
  });

  async function open(
    options: { via?: LossyCoordination; reconcile?: { clock: Clock; intervalMs: number } } = {},
  ): Promise<Process> {
    const gone: string[] = [];
    const errors: string[] = [];
    const onError = (_error: unknown, context: string) => errors.push(context);
    const registry = await SubscriptionRegistry.open(space, {
      catalog: await SharedCatalog.open(options.via?.coordination ?? coordination, space, onError),
      onError,
      onGone: (id) => gone.push(id),
      ...(options.reconcile ? { reconcile: options.reconcile } : {}),
    });
    opened.push(registry);
    return { registry, gone, errors };
  }

  it("indexes a subscription put through another registry, and follows its replacement and removal", async () => {
    const a = await open();
    const b = await open();
    const sub = subscription(1);
    await a.registry.put(sub);
    await eventually(() => b.registry.forChannel(DEPLOYS).length === 1, "b to index the new subscription");
    expect(b.registry.forSession(sub.sessionId).map((s) => s.id)).toEqual([sub.id]);

    await a.registry.put({ ...sub, trigger: { type: "mention" } });
    await eventually(() => b.registry.get(sub.id)?.trigger.type === "mention", "b to see the replacement");

    await a.registry.remove(sub.id);
    await eventually(() => b.registry.get(sub.id) === undefined, "b to drop the removed subscription");
    expect(b.registry.forChannel(DEPLOYS)).toEqual([]);
    expect(b.gone).toEqual([sub.id]);
    expect(a.gone).toEqual([]);
  });

  it("loses neither of two subscriptions added at once through two registries", async () => {
    const a = await open();
    const b = await open();
    await Promise.all([a.registry.put(subscription(1)), b.registry.put(subscription(2))]);
    const later = await open();
    expect(later.registry.forChannel(DEPLOYS).map((s) => s.id)).toEqual([
      subscription(1).id,
      subscription(2).id,
    ]);
  });

  it("refresh repairs lost announcements of an add, a replacement and a removal", async () => {
    const via = lossy(coordination);
    const a = await open({ via });
    const b = await open();
    const sub = subscription(1);
    via.losing = true;

    await a.registry.put(sub);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(b.registry.get(sub.id)).toBeUndefined();
    await b.registry.refresh();
    expect(b.registry.forChannel(DEPLOYS).map((s) => s.id)).toEqual([sub.id]);

    await a.registry.put({ ...sub, instructions: "tell me" });
    expect(b.registry.get(sub.id)?.instructions).toBeUndefined();
    await b.registry.refresh();
    expect(b.registry.get(sub.id)?.instructions).toBe("tell me");

    await a.registry.remove(sub.id);
    expect(b.registry.get(sub.id)).toBeDefined();
    await b.registry.refresh();
    expect(b.registry.get(sub.id)).toBeUndefined();
    expect(b.gone).toEqual([sub.id]);
  });

  it("reconciles with the catalog every interval, so a lost announcement is repaired on its own", async () => {
    const via = lossy(coordination);
    const a = await open({ via });
    const manual = manualClock();
    const b = await open({ reconcile: { clock: manual.clock, intervalMs: 1_000 } });
    expect(manual.delays).toEqual([1_000]);
    via.losing = true;
    await a.registry.put(subscription(1));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(b.registry.forChannel(DEPLOYS)).toEqual([]);

    manual.fire();
    await eventually(() => b.registry.forChannel(DEPLOYS).length === 1, "the reconciliation to find it");
    await eventually(() => manual.delays.length === 2, "the next reconciliation to be armed");
    await b.registry.close();
    manual.fire();
    expect(manual.delays).toHaveLength(2);
  });

  it("does not hand out, or mark as woken, a subscription removed elsewhere while its copy here is stale", async () => {
    const via = lossy(coordination);
    const a = await open({ via });
    const b = await open();
    const kept = subscription(1);
    const removed = subscription(2);
    await a.registry.put(kept);
    await a.registry.put(removed);
    await eventually(() => b.registry.forChannel(DEPLOYS).length === 2, "b to index both");
    via.losing = true;
    await a.registry.remove(removed.id);

    const position = { epoch: "e1", seq: 3, at: new Date().toISOString() };
    await b.registry.markWoken(kept.id, position);
    expect(await b.registry.wokenThrough(kept.id)).toEqual(position);
    expect(b.registry.get(removed.id)).toBeDefined();
    await b.registry.markWoken(removed.id, position);
    expect(await space.get(wokenKey(removed.id))).toBeUndefined();

    expect(await b.registry.current(kept.id)).toMatchObject({ id: kept.id });
    expect(await b.registry.current(removed.id)).toBeUndefined();
    expect(b.registry.get(removed.id)).toBeUndefined();
    expect(b.gone).toEqual([removed.id]);
  });

  it("reports an unreadable record once, however often it reconciles, and reads it again once rewritten", async () => {
    const a = await open();
    const sub = subscription(1);
    await a.registry.put(sub);
    await space.set(`sub:${sub.id}`, { v: 1, kind: "subscription", data: { id: "broken" } });
    const b = await open();
    expect(b.registry.get(sub.id)).toBeUndefined();
    await b.registry.refresh();
    await b.registry.refresh();
    expect(b.errors).toEqual([`loading subscription ${sub.id}`]);

    await a.registry.put(sub);
    await b.registry.refresh();
    expect(b.registry.get(sub.id)).toMatchObject({ id: sub.id });
    expect(b.errors).toHaveLength(1);
  });

  it("moves a single process's catalog record into the shared catalog when opened", async () => {
    const single = await singleProcessRegistry(space);
    await single.put(subscription(1));
    await single.close();
    expect(await space.get("catalog")).toBeDefined();

    const a = await open();
    expect(a.registry.forChannel(DEPLOYS).map((s) => s.id)).toEqual([subscription(1).id]);
    expect(await space.get("catalog")).toBeUndefined();
    const b = await open();
    expect(b.registry.forChannel(DEPLOYS).map((s) => s.id)).toEqual([subscription(1).id]);
  });
});

describe("SubscriptionRegistry on a single process's catalog", () => {
  it("keeps one catalog record listing the ids, and refresh reads nothing", async () => {
    const store = await createStore({ url: "memory:", dataDir: os.tmpdir() });
    const base = store.space("subscriptions");
    const reads: string[] = [];
    const space = spaceLike(base, {
      get: (key) => {
        reads.push(key);
        return base.get(key);
      },
    });
    const registry = await singleProcessRegistry(space);
    await registry.put(subscription(1));
    await registry.put(subscription(2));
    await registry.remove(subscription(1).id);
    expect(await base.get("catalog")).toEqual({
      v: 1,
      kind: "subscription-catalog",
      data: { ids: [subscription(2).id] },
    });
    reads.length = 0;
    await registry.refresh();
    expect(reads).toEqual([]);
    await registry.close();
    await store.close();
  });

  it("moves the wake marker only forward: a wake-up recorded late does not take it back", async () => {
    const store = await createStore({ url: "memory:", dataDir: os.tmpdir() });
    const space = store.space("subscriptions");
    const registry = await singleProcessRegistry(space);
    await registry.put(subscription(1));
    const id = subscription(1).id;
    const at = "2026-11-30T09:00:00.000Z";
    await registry.markWoken(id, { epoch: "e1", seq: 7, at });
    await registry.markWoken(id, { epoch: "e1", seq: 3, at });
    expect(await registry.wokenThrough(id)).toEqual({ epoch: "e1", seq: 7, at });
    await registry.markWoken(id, { epoch: "e1", seq: 9, at });
    expect((await registry.wokenThrough(id))?.seq).toBe(9);
    await registry.close();
    await store.close();
  });

  it("reads several wake markers in order, one unreadable given as its error beside the others", async () => {
    const store = await createStore({ url: "memory:", dataDir: os.tmpdir() });
    const space = store.space("subscriptions");
    const registry = await singleProcessRegistry(space);
    const [woken, never, broken] = [subscription(1), subscription(2), subscription(3)];
    for (const s of [woken, never, broken]) await registry.put(s);
    const at = "2026-11-30T09:00:00.000Z";
    await registry.markWoken(woken.id, { epoch: "e1", seq: 7, at });
    await space.set(wokenKey(broken.id), { v: 1, kind: "subscription-woken", data: {} });
    const reads = await readWokenMany(space, [woken.id, never.id, broken.id]);
    expect(reads.slice(0, 2)).toEqual([
      { ok: true, woken: { epoch: "e1", seq: 7, at } },
      { ok: true, woken: undefined },
    ]);
    expect(reads[2]).toMatchObject({ ok: false, error: expect.any(Error) });
    await registry.close();
    await store.close();
  });
});
