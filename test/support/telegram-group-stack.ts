/**
 * A Telegram end-to-end stack with one group ready for a feature that runs from groups
 * (subscriptions, scheduled tasks): Alice may use the bot, the bot administers the group, and
 * Alice and Bob are members. With the bot's messages in a chat and Alice's "say it and wait for
 * the answer". Here so each feature's Telegram end-to-end tests set the group up the same way.
 */
import { ALICE, BOB } from "../channels/telegram/harness.js";
import { type Stack, type StackOptions, startStack } from "../channels/telegram/stack.js";
import type { FakeChat } from "../fakes/fake-telegram/fake-telegram.js";

/** The stack (Alice allowed, with this model and extension) and `group` set up as said above. */
export async function startWithGroup(
  group: FakeChat,
  options: Pick<StackOptions, "handler" | "extend">,
): Promise<Stack> {
  const stack = await startStack({ allowedUsers: [ALICE.id], ...options });
  const { state, bot } = stack.tg;
  state.chat(group);
  state.setMember(group.id, bot.id, "administrator");
  state.setMember(group.id, ALICE.id, "member");
  state.setMember(group.id, BOB.id, "member");
  return stack;
}

/** The texts of the messages the bot sent in `chat`, oldest first. */
export function botTexts(s: Stack, chat: FakeChat): string[] {
  return s.tg.state.botMessages(chat.id).map((m) => m.text);
}

/** The first message the bot sent in `chat` (from index `after`) that contains `expected`. */
export function botReply(s: Stack, chat: FakeChat, expected: string, after = 0): Promise<string> {
  return s.tg.waitFor(() =>
    botTexts(s, chat)
      .slice(after)
      .find((t) => t.includes(expected)),
  );
}

/** Alice writes `text` in `chat`; resolves with the first new bot message there containing `expected`. */
export async function aliceSays(s: Stack, chat: FakeChat, text: string, expected: string): Promise<string> {
  const before = botTexts(s, chat).length;
  s.tg.sendUserMessage({ chat, from: ALICE, text });
  return botReply(s, chat, expected, before);
}
