/**
 * TelegramMessenger: send_message / send_file for sessions on Telegram. A message to the
 * session's own chat goes into its forum topic; another group is addressed by its chat id or
 * @username (a topic as chat:topic), and posted to only when the requester may post there
 * (getChatMember through the directory, posting-access.ts: left, kicked, unknown or muted is no,
 * and in a broadcast channel only its creator and posting admins).
 * Another person's private chat with the bot is refused (as Slack refuses DMs): anyone who ever
 * started the bot could otherwise be written to, in the bot's name, by a model told to.
 * Files are uploaded with sendDocument into the session's chat and topic. Failures come back as
 * results for the model, never as exceptions.
 */
import type { Api } from "grammy";
import type { Logger } from "pino";
import { clip } from "../../core/surrogate-pairs.js";
import type { Caller, ThreadTarget } from "../../core/thread-target.js";
import type { Messenger, MessengerResult, OutgoingFile } from "../../tools/messaging/messenger.js";
import { type PostingDirectory, postingAccess } from "../shared/posting-access.js";
import { errorText } from "./telegram-errors.js";
import { markdownToTelegramHtml } from "./telegram-html.js";
import { addressOf, type ChatAddress, ChatSender, telegramIdOf } from "./telegram-send.js";
import { splitTelegramHtml } from "./telegram-split.js";

const CAPTION_LIMIT = 1024;

function describe(address: ChatAddress): string {
  return `Telegram chat ${address.chatId}${address.threadId === undefined ? "" : ` (topic ${address.threadId})`}`;
}

/** The Messenger for the "telegram" platform. */
export class TelegramMessenger implements Messenger {
  /** `directory` finds chats and checks who may post (it may throw before the bot is known). */
  constructor(
    private readonly api: Api,
    private readonly logger: Logger,
    private readonly directory: () => PostingDirectory,
  ) {}

  async destinationOf(sender: Caller, channel: string): Promise<string | undefined> {
    const found = await this.destination(sender, channel);
    if (!found.ok) return undefined;
    const where = describe(addressOf(found.target));
    return found.name === undefined ? where : `${found.name} (${where})`;
  }

  async sendMessage(sender: Caller, channel: string, text: string): Promise<MessengerResult> {
    const found = await this.destination(sender, channel);
    if (!found.ok) {
      this.logger.info({ reason: found.reason, channel: channel.trim() }, "telegram send_message refused");
      return { ok: false, error: found.error };
    }
    try {
      const address = addressOf(found.target);
      await new ChatSender(this.api, address, this.logger).sendAll(
        splitTelegramHtml(markdownToTelegramHtml(text)),
      );
      return { ok: true, where: describe(address) };
    } catch (error) {
      return { ok: false, error: `Telegram refused the message: ${errorText(error)}` };
    }
  }

  /**
   * Where a message to `channel` goes for `sender` (with the chat's name when the directory gave
   * one): the session's own chat and topic for its own chat id, else the group the directory finds
   * when the requester may post there; another person's private chat never. Else the refusal, its
   * words for the model and its real reason for the log (which only a refused send writes: an
   * approval card asks here too, for a message that may never be sent).
   */
  private async destination(
    sender: Caller,
    channel: string,
  ): Promise<
    | { readonly ok: true; readonly target: ThreadTarget; readonly name?: string }
    | { readonly ok: false; readonly error: string; readonly reason: string }
  > {
    const ref = channel.trim();
    const chatId = telegramIdOf(ref);
    if (ref === sender.target.channel) return { ok: true, target: sender.target, name: "this conversation" };
    if (chatId !== undefined && chatId > 0)
      return {
        ok: false,
        error: `${chatId} is a private chat with one person; I post only to groups and to this conversation.`,
        reason: "another person's private chat",
      };
    const access = await postingAccess(this.directory, sender, ref);
    if (!access.ok) return { ok: false, error: access.error, reason: access.reason };
    const { workspace, channel: chat, thread, name } = access.ref;
    return {
      ok: true,
      target: { platform: "telegram", workspace, channel: chat, ...(thread !== undefined ? { thread } : {}) },
      ...(name === undefined ? {} : { name }),
    };
  }

  async sendFile(target: ThreadTarget, file: OutgoingFile, caption?: string): Promise<MessengerResult> {
    const address = addressOf(target);
    const shortCaption = caption && clip(caption, CAPTION_LIMIT);
    // What the cut left off (clip ends a cut caption in "…"): the model is told, not to believe it went out.
    const unsent = shortCaption && shortCaption !== caption ? caption.length - (shortCaption.length - 1) : 0;
    try {
      await new ChatSender(this.api, address, this.logger).document(file.path, file.name, {
        caption: shortCaption,
      });
      const where = describe(address);
      return {
        ok: true,
        where:
          unsent === 0
            ? where
            : `${where}, but its caption was cut at Telegram's ${CAPTION_LIMIT} characters: its last ${unsent} were not sent`,
      };
    } catch (error) {
      return { ok: false, error: `Telegram refused the file: ${errorText(error)}` };
    }
  }
}
