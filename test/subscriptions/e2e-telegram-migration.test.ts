/**
 * Telegram subscriptions across a group's upgrade to a supergroup, end to end on the fake Bot API:
 * the supergroup keeps the group's id for its session (telegram-migrations.ts), and so for its
 * subscriptions — a subscription made on the group keeps waking and reading, the supergroup's new
 * id names the same subscription, an upgrade the bot never heard of is learnt when the group's id is
 * named again or the bot connects with a subscription on it, a subscription stored under the
 * supergroup's id moves to the group's, its own conversation still cannot subscribe to itself,
 * and the bot's removal from the supergroup closes the group's subscriptions.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ALICE, ALICE_DM, BOB } from "../channels/telegram/harness.js";
import type { Stack } from "../channels/telegram/stack.js";
import type { FakeChat } from "../fakes/fake-telegram/fake-telegram.js";
import { fromVersioned } from "../../src/store/versioned.js";
import { subscriptionSchema } from "../../src/subscriptions/subscription.js";
import { readCatalogRecord } from "../../src/subscriptions/subscription-catalog.js";
import { SUBSCRIPTION_KIND, subscriptionKey } from "../../src/subscriptions/subscription-registry.js";
import { eventually } from "../support/eventually.js";
import { aliceSays, startWithGroup } from "../support/telegram-group-stack.js";
import { call, PuppetModel, telegramSubscriptions, wakePrompts } from "./e2e-support.js";

/** A basic group, upgraded during each test. */
const PLAIN: FakeChat = { id: -4242, type: "group", title: "Plain" };

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

/** The stack with subscriptions; the bot administers Plain, where Alice and Bob are. */
async function start(): Promise<Stack> {
  stack = await startWithGroup(PLAIN, {
    handler: new PuppetModel().handler,
    extend: telegramSubscriptions(),
  });
  return stack;
}

/** Alice subscribes from her DM (in auto mode: no approval card) and gets the tool's answer. */
function aliceSubscribes(s: Stack, channel: number): Promise<string> {
  const args = { channel: String(channel), trigger: { type: "keywords", keywords: ["down"] } };
  return aliceSays(s, ALICE_DM, call("subscribe_channel", args), "Tool said:");
}

/** The stack started again on the same store (the bot's process restarted). */
async function restart(s: Stack): Promise<Stack> {
  stack = await s.restart();
  return stack;
}

/** The ids of the stored subscriptions (the single-process catalog record). */
async function catalogIds(s: Stack): Promise<readonly string[]> {
  return readCatalogRecord(s.store.space("subscriptions"));
}

/** The channel id a subscription is stored under. */
async function storedChannel(s: Stack, id: string): Promise<string | undefined> {
  const raw = await s.store.space("subscriptions").get(subscriptionKey(id));
  if (raw === undefined) return undefined;
  return fromVersioned(raw, { kind: SUBSCRIPTION_KIND, schema: subscriptionSchema }).channelRef.channel;
}

/** Upgrade Plain and wait until the bot has followed it (it answers in the supergroup). */
async function upgrade(s: Stack): Promise<FakeChat> {
  const supergroup = s.tg.migrateGroup(PLAIN, BOB);
  await aliceSays(s, supergroup, "@coworker_bot /status", "");
  return supergroup;
}

describe("Telegram subscriptions across a group's upgrade to a supergroup", () => {
  it("a subscription made on the group keeps waking, and the supergroup's id names the same subscription", async () => {
    const s = await start();
    await aliceSays(s, ALICE_DM, "/mode auto", "Mode set to auto");
    expect(await aliceSubscribes(s, PLAIN.id)).toContain("Subscribed to Plain");
    const supergroup = await upgrade(s);

    s.tg.sendUserMessage({ chat: supergroup, from: BOB, text: "lunch at noon?" });
    s.tg.sendUserMessage({ chat: supergroup, from: BOB, text: "the db is down" });
    await s.tg.waitFor(() => wakePrompts(s.openai).some((p) => p.includes("the db is down")));
    const caught = await aliceSays(
      s,
      ALICE_DM,
      call("catch_up", { channel: String(supergroup.id) }),
      "Tool said:",
    );
    expect(caught).toContain("Plain: 3 unread messages"); // with Alice's /status
    expect(caught).toContain("lunch at noon?");
    expect(await aliceSubscribes(s, supergroup.id)).toContain("Updated the subscription to Plain");
  });

  it("an upgrade the bot never heard of is learnt when the group's id is named again: the subscription recovers", async () => {
    const s = await start();
    await aliceSays(s, ALICE_DM, "/mode auto", "Mode set to auto");
    expect(await aliceSubscribes(s, PLAIN.id)).toContain("Subscribed to Plain");
    // Upgraded while the bot was away: no service message reached it.
    const supergroup = s.tg.migrateGroup(PLAIN, BOB, { announce: false });
    // The group's id answers with the upgrade's 400: the lookup is asked of the supergroup instead.
    expect(await aliceSubscribes(s, PLAIN.id)).toContain("Updated the subscription to Plain");
    s.tg.sendUserMessage({ chat: supergroup, from: BOB, text: "the db is down" });
    await s.tg.waitFor(() => wakePrompts(s.openai).some((p) => p.includes("the db is down")));
  });

  it("an upgrade the bot never heard of is learnt when it connects: the group's subscription wakes for the supergroup", async () => {
    const s = await start();
    await aliceSays(s, ALICE_DM, "/mode auto", "Mode set to auto");
    expect(await aliceSubscribes(s, PLAIN.id)).toContain("Subscribed to Plain");
    // Upgraded while the bot was away, and nobody names the group again.
    const supergroup = s.tg.migrateGroup(PLAIN, BOB, { announce: false });
    const s2 = await restart(s);
    // Connecting, it looks up the subscription's chat: the group's id answers with the upgrade.
    await s2.tg.waitFor(() => s2.tg.callsOf("getChat").some((c) => c.params.chat_id === supergroup.id));
    s2.tg.sendUserMessage({ chat: supergroup, from: BOB, text: "the db is down" });
    await s2.tg.waitFor(() => wakePrompts(s2.openai).some((p) => p.includes("the db is down")));
  });

  it("a subscription stored under the supergroup's id moves to the group's id the session keeps, and wakes", async () => {
    const s = await start();
    await aliceSays(s, ALICE_DM, "/mode auto", "Mode set to auto");
    const supergroup = s.tg.migrateGroup(PLAIN, BOB, { announce: false });
    // Named by the supergroup's id before the upgrade was known: stored under that id.
    expect(await aliceSubscribes(s, supergroup.id)).toContain("Subscribed to Plain");
    const [id] = await catalogIds(s);
    expect(await storedChannel(s, id!)).toBe(String(supergroup.id));
    // The group's id named again teaches the upgrade: from then on the supergroup's messages are
    // reported under the group's id, which the stored subscription does not match.
    await aliceSays(s, ALICE_DM, call("catch_up", { channel: String(PLAIN.id) }), "Tool said:");

    const s2 = await restart(s);
    await eventually(async () => (await storedChannel(s2, id!)) === String(PLAIN.id), "the move");
    s2.tg.sendUserMessage({ chat: supergroup, from: BOB, text: "the db is down" });
    await s2.tg.waitFor(() => wakePrompts(s2.openai).some((p) => p.includes("the db is down")));
  });

  it("the supergroup's own conversation still cannot subscribe to itself", async () => {
    const s = await start();
    await aliceSays(s, PLAIN, "@coworker_bot /mode auto", "Mode set to auto");
    const supergroup = await upgrade(s);
    const answer = await aliceSays(
      s,
      supergroup,
      `@coworker_bot ${call("subscribe_channel", { channel: String(supergroup.id) })}`,
      "Tool said:",
    );
    expect(answer).toContain("Plain is this conversation itself");
  });

  it("the bot's removal from the supergroup closes the subscription made on the group", async () => {
    const s = await start();
    await aliceSays(s, ALICE_DM, "/mode auto", "Mode set to auto");
    expect(await aliceSubscribes(s, PLAIN.id)).toContain("Subscribed to Plain");
    const supergroup = await upgrade(s);
    const before = s.tg.state.botMessages(ALICE.id).length;
    s.tg.removeBot(supergroup, BOB);
    const told = await s.tg.waitFor(() =>
      s.tg.state
        .botMessages(ALICE.id)
        .slice(before)
        .find((m) => m.text.includes("I was removed from Plain")),
    );
    expect(told.text).toContain("stopped watching it");
    expect(await aliceSays(s, ALICE_DM, "/subscriptions", "subscriptions:")).toBe("Your subscriptions: none");
  });
});
