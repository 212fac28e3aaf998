/**
 * What the Telegram end-to-end tests share: reading the model's request (its last message, the
 * last user text) and finding the bot's card that carries a button.
 */
import type { StoredMessage } from "../../fakes/fake-telegram/fake-telegram.js";
import type { Stack } from "./stack.js";

export type Body = { messages: { role: string; content?: unknown }[] };

export const lastMessage = (body: Body) => body.messages.at(-1)!;
export const lastUserText = (body: Body) =>
  String([...body.messages].reverse().find((m) => m.role === "user")?.content ?? "");

/** The bot's message in `chatId` with a button labelled `label`. */
export function cardWith(stack: Stack, chatId: number, label: string): StoredMessage | undefined {
  return stack.tg.state
    .botMessages(chatId)
    .find((message) => message.reply_markup?.inline_keyboard.flat().some((button) => button.text === label));
}
