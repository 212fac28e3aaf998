/**
 * Scheduled tasks end to end on Telegram: the real grammY bot against the fake Bot API, the real
 * engine with the scheduling tools against the fake model (the puppet), the real SessionManager
 * on SQLite, and real time. Alice's DM is one conversation, the Team group another.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ALICE, ALICE_DM, GROUP } from "../channels/telegram/harness.js";
import type { Stack } from "../channels/telegram/stack.js";
import type { StoredMessage } from "../fakes/fake-telegram/fake-telegram.js";
import { call, PuppetModel } from "../subscriptions/e2e-support.js";
import { aliceSays, botReply, botTexts, startWithGroup } from "../support/telegram-group-stack.js";
import { fromNow, taskIdIn, telegramSchedules } from "./e2e-support.js";

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

/** The stack with scheduled tasks; the bot administers Team, where Alice and Bob are. */
async function start(): Promise<Stack> {
  stack = await startWithGroup(GROUP, { handler: new PuppetModel().handler, extend: telegramSchedules() });
  return stack;
}

/** Alice approves the newest approval card in her DM; resolves with its text. */
async function approve(s: Stack): Promise<string> {
  const card = await s.tg.waitFor(() =>
    s.tg.state
      .botMessages(ALICE.id)
      .filter((m: StoredMessage) => m.reply_markup?.inline_keyboard.flat().some((b) => b.text === "Approve"))
      .at(-1),
  );
  s.tg.pressButton({
    chat: ALICE_DM,
    from: ALICE,
    messageId: card.message_id,
    data: s.tg.buttonData(card, "Approve"),
  });
  return card.text;
}

describe("Telegram scheduled tasks end to end", () => {
  it("a one-shot task created with approval runs in the chat at its time; wake_me_later wakes it with its note", async () => {
    const s = await start();
    s.tg.sendUserMessage({
      chat: ALICE_DM,
      from: ALICE,
      text: call("schedule_task", { prompt: "remind me to stretch", at: fromNow(5_000) }),
    });
    const card = await approve(s);
    expect(card).toContain("Runs: remind me to stretch");
    expect(card).toContain("Where: this conversation (telegram chat 1001)");
    const id = taskIdIn(await botReply(s, ALICE_DM, "Scheduled task tsk_"));
    expect(await botReply(s, ALICE_DM, "You said: [Scheduled run")).toContain(
      `task ${id}, set up by @alice]`,
    );

    const woken = await aliceSays(
      s,
      ALICE_DM,
      call("wake_me_later", { in_s: 1, note: "look at the build" }),
      "Tool said: I will wake",
    );
    expect(woken).toContain("wak_");
    expect(await botReply(s, ALICE_DM, "You said: [Wake-up")).toContain("you asked to be woken at");
    const prompt = JSON.stringify(s.openai.requests.at(-1));
    expect(prompt).toContain("look at the build");
  });

  it("lists and cancels Alice's task and subscription from the group, a different conversation", async () => {
    const s = await start();
    s.tg.sendUserMessage({
      chat: ALICE_DM,
      from: ALICE,
      text: call("schedule_task", { prompt: "daily summary", cron: "0 18 * * *", timezone: "Europe/Paris" }),
    });
    await approve(s);
    const id = taskIdIn(await botReply(s, ALICE_DM, "Scheduled task tsk_"));
    const asked = botTexts(s, ALICE_DM).length;
    s.tg.sendUserMessage({
      chat: ALICE_DM,
      from: ALICE,
      text: call("subscribe_channel", { channel: String(GROUP.id) }),
    });
    expect(await approve(s)).toContain(`Watch ${GROUP.id}`);
    await botReply(s, ALICE_DM, "Subscribed to Team", asked);

    // Listed in the group, her DM's task and subscription are counted, not shown (their cards
    // are posted before the reply, so none came).
    const before = botTexts(s, GROUP).length;
    expect(await aliceSays(s, GROUP, "/schedules", "Scheduled tasks (1):")).toContain(
      "1 item of yours not shown here",
    );
    expect(await aliceSays(s, GROUP, "/subscriptions", "Your subscriptions (1):")).toContain(
      "1 item of yours not shown here",
    );
    const shown = botTexts(s, GROUP).slice(before).join("\n");
    expect(shown).not.toContain("daily summary");
    expect(shown).not.toContain(id);
    // In her DM each is on a card.
    const inDm = botTexts(s, ALICE_DM).length;
    await aliceSays(s, ALICE_DM, "/schedules", "Scheduled tasks (1):");
    expect(await botReply(s, ALICE_DM, `Scheduled task ${id}`, inDm)).toContain(
      `[${id}] "daily summary" — posts in this conversation`,
    );
    await aliceSays(s, ALICE_DM, "/subscriptions", "Your subscriptions (1):");
    expect(await botReply(s, ALICE_DM, "Subscription sub_", inDm)).toContain("wakes this conversation");
    // Cancelling by id still works from the group, which is not shown where her DM items post.
    expect(await aliceSays(s, GROUP, `/cancel_task ${id}`, "Cancelled")).toBe(
      `Cancelled task ${id} (posted in another conversation).`,
    );
    const unsubscribed = await aliceSays(s, GROUP, `/unsubscribe ${GROUP.id}`, "Unsubscribed");
    expect(unsubscribed).toContain("it no longer wakes the conversation it was made in");
    expect(unsubscribed).not.toContain("1001");
    expect(await aliceSays(s, ALICE_DM, "/schedules", "Scheduled tasks:")).toBe("Scheduled tasks: none");
    expect(await aliceSays(s, ALICE_DM, "/subscriptions", "subscriptions:")).toBe("Your subscriptions: none");
  });
});
