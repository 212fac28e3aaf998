/**
 * Where a Telegram message's words come from: the sender's own, or someone else's — a forward
 * (its origin, Bot API 7.0 MessageOrigin, or only `forward_date` before it) or an inline bot's
 * result sent through it (`via_bot`). Words that are not the sender's are never a command
 * (telegram-inbound.ts), a forwarded voice message is not the sender's voice (telegram-files.ts),
 * and such words travel as the words of their origin (telegram-hand-over.ts). Kept apart from the
 * message schema (telegram-inbound.ts), which only reads the fields this module interprets.
 */
import { z } from "zod";
import type { TelegramMessage } from "./telegram-inbound.js";

/**
 * A message forwarded from elsewhere: its words are not its forwarder's, so a command in it is
 * never run (it may still be a message for the agent, when the bot is addressed otherwise).
 */
export function isForwarded(message: Pick<TelegramMessage, "forward_origin" | "forward_date">): boolean {
  return message.forward_origin !== undefined || message.forward_date !== undefined;
}

/**
 * Whether a message's words are not its sender's own: forwarded from elsewhere, or an inline bot's
 * result sent through it (see `via_bot`). A command in one is never run.
 */
export function isOthersWords(
  message: Pick<TelegramMessage, "forward_origin" | "forward_date" | "via_bot">,
): boolean {
  return isForwarded(message) || message.via_bot !== undefined;
}

/** The inline bot of `via_bot` as far as it reads: its id and username, when well formed. */
const viaBotSchema = z.object({ id: z.number().int(), username: z.string().max(64).optional() });

/** Where a forward came from, as the platform says it; unknown for an origin it does not name. */
export interface ForwardedFrom {
  /** With the names Telegram gives (anyone's choice: for the block the text is shown in). */
  readonly origin: string;
  /** Without any name, ids only (for the line in the forwarder's own text). */
  readonly source: string;
}

/**
 * Where the words of a message that are not its sender's came from (see ForwardedFrom): a forward's
 * origin, or the inline bot it was sent through; undefined when they are the sender's own. A
 * forward with no origin (`forward_date` alone) is of an unknown origin, as is one whose origin the
 * schema read as unknown.
 */
export function forwardedFrom(
  message: Pick<TelegramMessage, "forward_origin" | "forward_date" | "via_bot">,
): ForwardedFrom | undefined {
  if (!isForwarded(message)) return message.via_bot === undefined ? undefined : viaBotOf(message.via_bot);
  const origin = message.forward_origin;
  const named = (name: string | undefined) => (name === undefined ? "" : ` ${JSON.stringify(name)}`);
  switch (origin?.type) {
    case "user": {
      const user = origin.sender_user;
      const name = [user.first_name, user.last_name].filter(Boolean).join(" ");
      const handle = user.username ? ` @${user.username}` : "";
      return {
        origin: `Telegram user${named(name)}${handle} (id ${user.id})`,
        source: `Telegram user ${user.id}`,
      };
    }
    case "hidden_user":
      return {
        origin: `a Telegram user who hides their account, going by${named(origin.sender_user_name)} (unverified: anyone can use that name)`,
        source: "a Telegram user who hides their account",
      };
    case "chat":
      return {
        origin: `Telegram chat${named(origin.sender_chat.title)} (id ${origin.sender_chat.id})`,
        source: `Telegram chat ${origin.sender_chat.id}`,
      };
    case "channel":
      return {
        origin: `Telegram channel${named(origin.chat.title)} (id ${origin.chat.id})`,
        source: `Telegram channel ${origin.chat.id}`,
      };
    default:
      return { origin: "unknown origin", source: "an unknown origin" };
  }
}

/** The inline bot a message was sent through, as an origin (its username is unique on Telegram). */
function viaBotOf(viaBot: unknown): ForwardedFrom {
  const bot = viaBotSchema.safeParse(viaBot);
  if (!bot.success) return { origin: "an inline bot", source: "an inline bot" };
  const handle = bot.data.username === undefined ? "" : ` @${bot.data.username}`;
  return {
    origin: `Telegram inline bot${handle} (id ${bot.data.id})`,
    source: `Telegram inline bot ${bot.data.id}`,
  };
}
