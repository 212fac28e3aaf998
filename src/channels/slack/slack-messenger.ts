/**
 * SlackMessenger: send_message / send_file for sessions in Slack. A message to the session's own
 * channel goes into its thread; another channel is found by id, <#C…|name> or #name through the
 * directory, and posted to only when the requester is a member of it (posting-access.ts: this
 * also refuses DMs, and group DMs the requester is not in). Text is converted to mrkdwn and split
 * under Slack's limits; files are uploaded into the session's thread (slack-upload.ts). Failures
 * come back as results that say what to do, never as exceptions.
 */
import { readFile } from "node:fs/promises";
import type { Logger } from "pino";
import type { Caller, ThreadTarget } from "../../core/thread-target.js";
import type { PlatformDirectory } from "../../subscriptions/platform-directory.js";
import type { Messenger, MessengerResult, OutgoingFile } from "../../tools/messaging/messenger.js";
import { postingAccess } from "../shared/posting-access.js";
import { callWithRetry, describeError, type SlackClients, slackErrorCode } from "./slack-api.js";
import { escapeMrkdwn, SLACK_LIMITS } from "./slack-limits.js";
import { markdownToMrkdwn } from "./slack-markdown.js";
import { splitMrkdwn } from "./slack-split.js";
import { NO_UNFURLS } from "./slack-unfurls.js";
import { uploadFile } from "./slack-upload.js";

const TEXT_LIMIT = SLACK_LIMITS.updateText - 100;

export interface SlackMessengerOptions {
  readonly clients: SlackClients;
  /** The workspace's directory, which finds channels and checks members (may throw before `start`). */
  readonly directory: () => PlatformDirectory;
  /** The handle people invite the bot with ("coworker"), for advice in errors. */
  readonly botName: () => string;
  readonly logger: Logger;
}

/** What to tell the model when Slack refuses a post or an upload. */
function advice(code: string | undefined, where: string, botName: string): string {
  switch (code) {
    case "not_in_channel":
      return `I am not a member of ${where}: invite me there with /invite @${botName}, then try again.`;
    case "channel_not_found":
      return `I can't see ${where}: it does not exist, or it is private and I am not in it.`;
    case "is_archived":
      return `${where} is archived.`;
    case "restricted_action":
    case "restricted_action_read_only_channel":
    case "restricted_action_thread_only_channel":
      return `The workspace does not let me post in ${where} (${code}).`;
    default:
      return `Slack refused it (${code ?? "unknown error"}).`;
  }
}

/** What send_file adds when the file is up but Slack refused its caption: not to send it again. */
export function captionNotPosted(reason: string): string {
  return `but its caption could not be posted (${reason}); the file is there, so do not upload it again`;
}

/** Model markdown as the mrkdwn messages it is posted in, in order. */
function messagesOf(markdown: string): string[] {
  return splitMrkdwn(markdownToMrkdwn(markdown) || escapeMrkdwn(markdown), TEXT_LIMIT);
}

/** Where a message goes: a channel (and thread), with the name people know it by. */
interface Destination {
  readonly channel: string;
  readonly thread?: string;
  readonly name: string;
}

/** The Messenger for the "slack" platform. */
export class SlackMessenger implements Messenger {
  constructor(private readonly options: SlackMessengerOptions) {}

  async destinationOf(sender: Caller, channel: string): Promise<string | undefined> {
    const found = await this.destination(sender, channel);
    if (!found.ok) return undefined;
    const { name, channel: id } = found.destination;
    return name === "this thread" || name === id ? name : `${name} (${id})`;
  }

  async sendMessage(sender: Caller, channel: string, text: string): Promise<MessengerResult> {
    const found = await this.destination(sender, channel);
    if (!found.ok) {
      this.options.logger.info(
        { reason: found.reason, channel: channel.trim() },
        "slack send_message refused",
      );
      return { ok: false, error: found.error };
    }
    const { destination } = found;
    try {
      const first = await this.postAll(destination, messagesOf(text));
      return { ok: true, where: `${destination.name}${first ? ` (message ${first})` : ""}` };
    } catch (error) {
      this.options.logger.info(
        { err: describeError(error), channel: destination.channel },
        "slack send_message refused",
      );
      return { ok: false, error: advice(slackErrorCode(error), destination.name, this.options.botName()) };
    }
  }

  /** Post `messages` in order into `where`'s channel (and thread); the first one's ts. Throws what Slack refuses. */
  private async postAll(
    where: { readonly channel: string; readonly thread?: string | undefined },
    messages: readonly string[],
  ): Promise<string | undefined> {
    let first: string | undefined;
    for (const text of messages) {
      const posted = await callWithRetry(() =>
        this.options.clients.api.chat.postMessage({
          channel: where.channel,
          ...(where.thread ? { thread_ts: where.thread } : {}),
          text,
          ...NO_UNFURLS,
        }),
      );
      first ??= posted.ts;
    }
    return first;
  }

  /** Post a caption's messages after its first into `target`; why they are not all up, if so. */
  private async postCaptionRest(target: ThreadTarget, rest: readonly string[]): Promise<string | undefined> {
    try {
      await this.postAll(target, rest);
      return undefined;
    } catch (error) {
      this.options.logger.warn(
        { err: describeError(error), channel: target.channel },
        "slack took the file but refused the rest of its caption",
      );
      return `after its first part: ${slackErrorCode(error) ?? describeError(error)}`;
    }
  }

  /**
   * Where a message to `channel` goes for `sender`: the session's own thread for its own channel,
   * else the channel the directory finds when the requester may post there; else the refusal, its
   * words for the model and its real reason for the log (which only a refused send writes: an
   * approval card asks here too, for a message that may never be sent).
   */
  private async destination(
    sender: Caller,
    channel: string,
  ): Promise<
    | { readonly ok: true; readonly destination: Destination }
    | { readonly ok: false; readonly error: string; readonly reason: string }
  > {
    const ref = channel.trim();
    const from = sender.target;
    if (ref === from.channel)
      return {
        ok: true,
        destination: {
          channel: from.channel,
          ...(from.thread ? { thread: from.thread } : {}),
          name: "this thread",
        },
      };
    const access = await postingAccess(this.options.directory, sender, ref);
    if (!access.ok) return { ok: false, error: access.error, reason: access.reason };
    return {
      ok: true,
      destination: { channel: access.ref.channel, name: access.ref.name ?? access.ref.channel },
    };
  }

  async sendFile(target: ThreadTarget, file: OutgoingFile, caption?: string): Promise<MessengerResult> {
    const filename = file.name;
    try {
      const data = await readFile(file.path);
      // Converted, a caption can run past one message (& is &amp;): what follows its first
      // message is posted after it, as send_message's text is, never cut.
      const [comment, ...rest] = caption ? messagesOf(caption) : [];
      let { captionError } = await uploadFile(
        this.options.clients.api,
        target,
        { data, name: filename, ...(comment ? { comment } : {}) },
        this.options.logger,
      );
      if (captionError === undefined && rest.length > 0)
        captionError = await this.postCaptionRest(target, rest);
      const where = target.thread ? "this thread" : target.channel;
      return {
        ok: true,
        where: captionError === undefined ? where : `${where}, ${captionNotPosted(captionError)}`,
      };
    } catch (error) {
      const code = slackErrorCode(error);
      this.options.logger.info({ err: describeError(error), file: filename }, "slack send_file failed");
      return {
        ok: false,
        error: code
          ? advice(code, "this conversation", this.options.botName())
          : `The upload failed: ${describeError(error)}`,
      };
    }
  }
}
