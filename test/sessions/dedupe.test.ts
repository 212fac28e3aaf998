import { describe, expect, it } from "vitest";
import { InboundDedupe, MIN_DEDUPE_TTL_MS } from "../../src/sessions/inbound-dedupe.js";
import type { KeyValueSpace, Store } from "../../src/store/store.js";
import { textStep } from "../support/scripted-provider.js";
import { makeHarness, message, openStore, thread } from "./helpers/harness.js";

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
    };
    const store = { space: () => space } as unknown as Store;
    expect(await new InboundDedupe(store, 1_000).firstSeen(["a", "b", "a", " "])).toBe(true);
    expect(ttls).toEqual([MIN_DEDUPE_TTL_MS, MIN_DEDUPE_TTL_MS]);
  });
});
