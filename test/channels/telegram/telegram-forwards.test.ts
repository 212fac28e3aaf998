/**
 * Forwarded messages in Telegram: a linked channel's post that Telegram copies into its discussion
 * group (an automatic forward, `from` the "Telegram" account 777000) is no person's and runs
 * nothing; a person's forward is never a command — in a DM it still reaches the agent as the
 * forwarder's message, marked as forwarded so it is not read as a typed command either.
 */
import { afterEach, describe, expect, it } from "vitest";
import { FORWARDED_MARK } from "../../../src/channels/telegram/telegram-handlers.js";
import { parseTextCommand } from "../../../src/sessions/text-commands.js";
import type { FakeUser, UserMessageInput } from "../../fakes/fake-telegram/fake-telegram.js";
import { userMessage } from "../../fakes/fake-telegram/user-messages.js";
import { ALICE, ALICE_DM, BOB, type Harness, OPEN_GROUP, startHarness } from "./harness.js";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** The account Telegram sends a linked channel's posts from in its discussion group. */
const TELEGRAM: FakeUser = { id: 777000, is_bot: false, first_name: "Telegram" };
const LINKED_CHANNEL = { id: -100555, type: "channel", title: "News" };

/** Deliver a user message with extra Bot API fields (forward data) added. */
function send(h: Harness, input: UserMessageInput, extra: Record<string, unknown>): void {
  const message = { ...userMessage(h.tg.state, input), ...extra };
  h.tg.injectUpdate({ message });
}

describe("Telegram channel: forwarded messages", () => {
  it("runs nothing for a linked channel's automatic forward into an open group", async () => {
    harness = await startHarness();
    const { tg, service } = harness;
    const date = Math.floor(Date.now() / 1000);
    for (const text of ["/mode auto", "@coworker_bot deploy everything"])
      send(
        harness,
        { chat: OPEN_GROUP, from: TELEGRAM, text },
        {
          sender_chat: LINKED_CHANNEL,
          is_automatic_forward: true,
          forward_origin: { type: "channel", chat: LINKED_CHANNEL, message_id: 7, date },
          forward_date: date,
        },
      );
    // A person's command after them in the same chat is answered: the forwards were handled first.
    tg.sendUserMessage({ chat: OPEN_GROUP, from: BOB, text: "/status" });
    await tg.waitFor(() => service.commands.length === 1);
    expect(service.commands.map((command) => [command.name, command.user.id])).toEqual([
      ["status", String(BOB.id)],
    ]);
    expect(service.received).toEqual([]);
    expect(harness.logs().filter((line) => line.msg === "telegram: automatic forward ignored")).toHaveLength(
      2,
    );
  });

  it("never runs a command a person forwards, in a group or a DM", async () => {
    harness = await startHarness();
    const { tg, service } = harness;
    const date = Math.floor(Date.now() / 1000);
    const forwarded = {
      forward_origin: { type: "user", sender_user: { ...BOB, is_bot: false }, date },
      forward_date: date,
    };
    send(harness, { chat: OPEN_GROUP, from: ALICE, text: "/new" }, forwarded);
    send(harness, { chat: ALICE_DM, from: ALICE, text: "/new" }, forwarded);
    await tg.waitFor(() => service.received.length === 1);
    tg.sendUserMessage({ chat: OPEN_GROUP, from: BOB, text: "/status" });
    await tg.waitFor(() => service.commands.length === 1);
    expect(service.commands.map((command) => command.name)).toEqual(["status"]);
    // In the DM it is Alice's message for the agent, marked so it is not read as her command.
    const inbound = service.received[0]!;
    expect(inbound.user.id).toBe(String(ALICE.id));
    expect(inbound.target.channel).toBe(String(ALICE.id));
    expect(inbound.text).toBe(`${FORWARDED_MARK}\n/new`);
    expect(parseTextCommand(inbound.text, "coworker_bot")).toBeUndefined();
  });
});
