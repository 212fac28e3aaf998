/**
 * subscriptions.max_per_person: one person's subscriptions are counted across all their
 * conversations (each thread is its own session, with its own max_per_session), and one more is
 * refused with a message naming the limit; updating one they hold, or another person subscribing,
 * is not. The config key reaches the settings.
 */
import { afterEach, describe, expect, it } from "vitest";
import { configSchema } from "../../src/config/schema.js";
import { InProcessCoordination } from "../../src/store/coordination/in-process-coordination.js";
import type { Caller } from "../../src/core/thread-target.js";
import { settingsFromConfig } from "../../src/subscriptions/subscription-settings.js";
import { ALICE, type Harness, HOME, openHarness } from "./support.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Alice (or `who`) in thread `n` of #home: a session of its own. */
function inThread(n: number, who = ALICE.requester): Caller {
  const thread = `1700000000.${String(n).padStart(6, "0")}`;
  return { sessionId: `slack:T1:CHOME:${thread}`, target: { ...HOME, thread }, requester: who };
}

describe("subscriptions per person", () => {
  it("refuses the 21st subscription with max_per_person 20, held across 21 sessions", async () => {
    h = await openHarness({ settings: { maxPerPerson: 20 } });
    for (let n = 1; n <= 20; n++) {
      const outcome = await h.service.subscribe(inThread(n), { channel: "#deploys" });
      expect(outcome.ok, outcome.message).toBe(true);
    }
    const refused = await h.service.subscribe(inThread(21), { channel: "#deploys" });
    expect(refused).toEqual({
      ok: false,
      message:
        "You already have 20 channel subscriptions across your conversations, the most allowed; unsubscribe from one first (list_subscriptions shows them).",
    });
    expect(await h.service.listFor(inThread(21).sessionId)).toEqual([]);
    // Changing one she holds is no new subscription; Bob has his own count.
    expect((await h.service.subscribe(inThread(3), { channel: "#deploys", instructions: "new" })).ok).toBe(
      true,
    );
    const bob = { id: "UBOB", name: "Bob" };
    expect((await h.service.subscribe(inThread(21, bob), { channel: "#deploys" })).ok).toBe(true);
  });

  it("counts the subscriptions another process made, from the catalog they share", async () => {
    h = await openHarness({ settings: { maxPerPerson: 2 } });
    const coordination = new InProcessCoordination(h.store);
    const shared = { coordination, reconcileMs: 3_600_000 };
    const a = await openHarness({ store: h.store, settings: { maxPerPerson: 2 }, shared });
    const b = await openHarness({ store: h.store, settings: { maxPerPerson: 2 }, shared });
    try {
      expect((await a.service.subscribe(inThread(1), { channel: "#deploys" })).ok).toBe(true);
      expect((await a.service.subscribe(inThread(2), { channel: "#deploys" })).ok).toBe(true);
      const refused = await b.service.subscribe(inThread(3), { channel: "#deploys" });
      expect(refused.ok).toBe(false);
      expect(refused.message).toContain("You already have 2 channel subscriptions");
    } finally {
      await a.close();
      await b.close();
      await coordination.close();
    }
  });

  it("is subscriptions.max_per_person in the config, 50 unless set", () => {
    const parse = (subscriptions: Record<string, unknown>) =>
      settingsFromConfig(configSchema.parse({ subscriptions }).subscriptions);
    expect(parse({}).maxPerPerson).toBe(50);
    expect(parse({ max_per_person: 20 }).maxPerPerson).toBe(20);
    expect(() => parse({ max_per_person: 0 })).toThrow();
  });
});
