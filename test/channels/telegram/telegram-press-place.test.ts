/**
 * A card is decided only from its own chat (approvals/press-place.ts): its buttons pressed on a
 * message in another chat — a forwarded copy of the card, in the presser's private chat — are
 * refused, privately and naming nothing of it, and the card stays open; a card asked in a group
 * since upgraded to a supergroup is still pressed there.
 */
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { NOT_PRESSED_WHERE_ASKED } from "../../../src/approvals/press-place.js";
import type { FakeHandler } from "../../fakes/fake-openai.js";
import type { FakeChat } from "../../fakes/fake-telegram/fake-telegram.js";
import { cardWith, lastMessage, lastUserText } from "./e2e-helpers.js";
import { ALICE, ALICE_DM, BOB, GROUP } from "./harness.js";
import { type Stack, startStack } from "./stack.js";

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

/** "remember …" calls write_note (needs approval), then "noted"; anything else is echoed. */
const noteOrEcho: FakeHandler = ({ body }) => {
  if (lastMessage(body).role === "tool") return { text: "noted" };
  const text = lastUserText(body);
  return text.startsWith("remember")
    ? { toolCalls: [{ name: "write_note", arguments: JSON.stringify({ text }) }] }
    : { text: `You said: "${text}"` };
};

describe("Telegram: where a card may be pressed", () => {
  it("refuses a group card's button pressed in the presser's private chat; the group's press decides it", async () => {
    stack = await startStack({ allowedUsers: [ALICE.id], handler: noteOrEcho });
    const { tg, runs } = stack;
    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "hello" });
    const inDm = await tg.waitFor(() => tg.state.botMessages(ALICE.id)[0]);
    tg.sendUserMessage({ chat: GROUP, from: ALICE, text: "@coworker_bot remember milk" });
    const card = await tg.waitFor(() => cardWith(stack!, GROUP.id, "Approve"));
    const approve = tg.buttonData(card, "Approve");
    // The card's button, pressed on a message of Alice's private chat (as on a forwarded copy).
    const elsewhere = tg.pressButton({
      chat: ALICE_DM,
      from: ALICE,
      messageId: inDm.message_id,
      data: approve,
    });
    const refused = await tg.waitFor(() => tg.state.queries.get(elsewhere.callback_query.id)?.answer);
    expect(refused).toEqual({ text: NOT_PRESSED_WHERE_ASKED, show_alert: true });
    expect(runs.runs).toHaveLength(0);
    expect(tg.state.message(GROUP.id, card.message_id)!.reply_markup).toBeDefined();
    expect(tg.state.botMessages(ALICE.id)).toHaveLength(1);
    const inGroup = tg.pressButton({ chat: GROUP, from: ALICE, messageId: card.message_id, data: approve });
    await tg.waitFor(() => tg.state.botMessages(GROUP.id).some((m) => m.text.endsWith("noted")));
    expect(tg.state.queries.get(inGroup.callback_query.id)!.answer!.show_alert).toBe(false);
    expect(runs.runs.map((run) => run.args)).toEqual([{ text: "remember milk" }]);
  });

  it("still takes a press of a card asked in a group once it is a supergroup, in the supergroup", async () => {
    const group: FakeChat = { id: -4343, type: "group", title: "Plain group" };
    const lines: { msg?: string }[] = [];
    const logger = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line)) });
    stack = await startStack({ allowedUsers: [], allowedChats: [group.id], handler: noteOrEcho, logger });
    const { tg, runs } = stack;
    tg.sendUserMessage({ chat: group, from: BOB, text: "@coworker_bot remember kiwi" });
    const card = await tg.waitFor(() => cardWith(stack!, group.id, "Approve"));
    const supergroup = tg.migrateGroup(group, ALICE);
    await tg.waitFor(() => lines.some((line) => String(line.msg).includes("migrated")));
    // A message of the supergroup carries the card's button (the pressed message is the upgrade's own).
    const [welcome] = [...tg.state.messages.values()].filter((m) => m.chat_id === supergroup.id);
    const pressed = tg.pressButton({
      chat: supergroup,
      from: BOB,
      messageId: welcome!.message_id,
      data: tg.buttonData(card, "Approve"),
    });
    const answer = await tg.waitFor(() => tg.state.queries.get(pressed.callback_query.id)?.answer);
    expect(answer.show_alert).toBe(false);
    await tg.waitFor(() => runs.runs.length === 1);
    expect(runs.runs.map((run) => run.args)).toEqual([{ text: "remember kiwi" }]);
  });
});
