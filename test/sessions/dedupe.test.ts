import os from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dedupeKeysOf, InboundDedupe, MIN_DEDUPE_TTL_MS } from "../../src/sessions/inbound-dedupe.js";
import { createStore } from "../../src/store/create-store.js";
import type { KeyValueSpace, Store } from "../../src/store/store.js";
import { type RedisServer, startRedisServer } from "../support/redis-server.js";
import { textStep } from "../support/scripted-provider.js";
import { makeHarness, message, openStore, thread } from "./helpers/harness.js";

describe("dedupeKeysOf", () => {
  it("trims the keys and drops blanks and repeats", () => {
    expect(dedupeKeysOf([" Ev1", "Ev1", "", "  ", "C1:1.2 ", "C1:1.2"])).toEqual(["Ev1", "C1:1.2"]);
  });

  it("hands back a list that is clean already as it is, without a copy", () => {
    const keys = ["Ev1", "C1:1700000000.000100"];
    expect(dedupeKeysOf(keys)).toBe(keys);
    expect(dedupeKeysOf([])).toEqual([]);
  });
});

describe("inbound dedupe", () => {
  it("processes a redelivered event once", async () => {
    const h = await makeHarness({ steps: [textStep("once")] });
    const event = message("hello", { keys: ["Ev111", "C1:1700000000.000100"] });
    expect((await h.manager.receive(event)).status).toBe("started");
    expect((await h.manager.receive(event)).status).toBe("duplicate");
    await h.manager.idle();
    expect(h.outputs.for(thread()).closedTurns).toHaveLength(1);
    h.provider.assertAllConsumed();
  });

  it("drops the message/app_mention twin that shares channel+ts but has its own event id", async () => {
    const h = await makeHarness({ steps: [textStep("once")] });
    const asMessage = message("<@bot> hi", { keys: ["EvMessage", "C1:1700000000.000200"] });
    const asMention = { ...asMessage, dedupeKeys: ["EvMention", "C1:1700000000.000200"] };
    const results = await Promise.all([h.manager.receive(asMessage), h.manager.receive(asMention)]);
    expect(results.map((r) => r.status).sort()).toEqual(["duplicate", "started"]);
    await h.manager.idle();
    expect(h.provider.requests).toHaveLength(1);
  });

  it("remembers seen ids in the store, so a new process still drops them", async () => {
    const store = await openStore();
    const first = await makeHarness({ store, steps: [textStep("once")] });
    const event = message("hello", { keys: ["EvRestart"] });
    await first.manager.receive(event);
    await first.manager.idle();
    const second = await makeHarness({ store, steps: [] });
    expect((await second.manager.receive(event)).status).toBe("duplicate");
  });

  it("keeps every key for at least 24 hours", async () => {
    const ttls: Array<number | undefined> = [];
    const space: KeyValueSpace = {
      get: async () => undefined,
      set: async () => undefined,
      delete: async () => false,
      setIfAbsent: async (_key, _value, ttl) => {
        ttls.push(ttl);
        return true;
      },
      replaceIf: async () => false,
      deleteIf: async () => false,
    };
    const store = { space: () => space } as unknown as Store;
    expect(await new InboundDedupe(store, 1_000).firstSeen(["a", "b", "a", " "])).toBe(true);
    expect(ttls).toEqual([MIN_DEDUPE_TTL_MS, MIN_DEDUPE_TTL_MS]);
  });
});

/** A "dedupe" space in memory that counts reads and can hold writes until released. */
function heldSpace() {
  const data = new Map<string, unknown>();
  const state = { reads: 0, hold: undefined as Promise<void> | undefined };
  const holds = (key: string, expected: unknown) =>
    data.has(key) && JSON.stringify(data.get(key)) === JSON.stringify(expected);
  const space: KeyValueSpace = {
    get: async <T>(key: string) => {
      state.reads++;
      return data.get(key) as T | undefined;
    },
    set: async (key, value) => {
      await state.hold;
      data.set(key, value);
    },
    delete: async (key) => data.delete(key),
    setIfAbsent: async (key, value) => {
      await state.hold;
      if (data.has(key)) return false;
      data.set(key, value);
      return true;
    },
    replaceIf: async (key, expected, value) => {
      await state.hold;
      if (!holds(key, expected)) return false;
      data.set(key, value);
      return true;
    },
    deleteIf: async (key, expected) => {
      await state.hold;
      return holds(key, expected) && data.delete(key);
    },
  };
  const dedupe = new InboundDedupe({ space: () => space } as unknown as Store);
  return { dedupe, state };
}

describe("an interaction's ids (a slash command, a button press)", () => {
  let redis: RedisServer | undefined;
  beforeAll(async () => {
    redis = await startRedisServer();
  }, 20_000);
  afterAll(async () => {
    await redis?.stop();
  });

  it("are recorded in the store: the repeat is refused, also by a new process", async () => {
    const store = await openStore();
    const first = await makeHarness({ store, steps: [] });
    expect(await first.manager.firstDelivery(["slack:trigger:T1"])).toBe(true);
    expect(await first.manager.firstDelivery(["slack:trigger:T1"])).toBe(false);
    const second = await makeHarness({ store, steps: [] });
    expect(await second.manager.firstDelivery(["slack:trigger:T1"])).toBe(false);
    expect(await second.manager.firstDelivery(["slack:trigger:T2"])).toBe(true);
  });

  it("are shared by processes on one Redis: the one that sees a replay second drops it", async () => {
    const url = (redis as RedisServer).url;
    const stores = [
      await createStore({ url, dataDir: os.tmpdir() }),
      await createStore({ url, dataDir: os.tmpdir() }),
    ];
    try {
      const [a, b] = await Promise.all(stores.map((store) => makeHarness({ store, steps: [] })));
      const answers = await Promise.all([
        a!.manager.firstDelivery(["slack:trigger:R1"]),
        b!.manager.firstDelivery(["slack:trigger:R1"]),
      ]);
      expect(answers.sort()).toEqual([false, true]);
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  });
});

describe("early 'seen?' reads", () => {
  it("a prefetched answer serves the next seen without a second read", async () => {
    const { dedupe, state } = heldSpace();
    await dedupe.record(["old"]);
    const release = dedupe.claim(["old", "other"])!;
    dedupe.prefetch(["old", "other"]);
    expect(await dedupe.seen(["other", "old"])).toBe(true);
    expect(state.reads).toBe(2);
    release();
  });

  it("a write of the keys that starts after the prefetch makes seen read again", async () => {
    const { dedupe, state } = heldSpace();
    const release = dedupe.claim(["k"])!;
    dedupe.prefetch(["k"]);
    await dedupe.record(["k"]);
    expect(await dedupe.seen(["k"])).toBe(true);
    expect(state.reads).toBe(2);
    release();
  });

  it("a write of the keys still under way when the prefetch starts makes seen read again", async () => {
    const { dedupe, state } = heldSpace();
    let open!: () => void;
    state.hold = new Promise<void>((resolve) => {
      open = resolve;
    });
    const writing = dedupe.record(["k"]);
    const release = dedupe.claim(["k"])!;
    dedupe.prefetch(["k"]);
    open();
    await writing;
    expect(await dedupe.seen(["k"])).toBe(true);
    release();
  });

  it("releasing the claim drops its prefetch: a later seen reads the store", async () => {
    const { dedupe, state } = heldSpace();
    const release = dedupe.claim(["k"])!;
    dedupe.prefetch(["k"]);
    release();
    expect(await dedupe.seen(["k"])).toBe(false);
    expect(state.reads).toBe(2);
  });
});
