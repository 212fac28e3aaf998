/**
 * SlackDirectory: the PlatformDirectory of one Slack workspace, on the Web API client the Slack
 * channel already uses. Channels are found by id, `<#C…|name>` or #name (conversations.info /
 * conversations.list), members checked with conversations.members, public channels joined with
 * conversations.join, and history read with conversations.history / replies — rarely, because
 * Slack limits history reads to about one a minute for many apps. Responses are validated.
 */
import type { webApi } from "@slack/bolt";
import { z } from "zod";
import type { BufferEntryInput } from "../../subscriptions/buffer-entry.js";
import type {
  BotIdentity,
  HistoryOptions,
  HistoryPage,
  PlatformDirectory,
  ReadAccess,
  ResolveResult,
} from "../../subscriptions/platform-directory.js";
import { isBotPost, mentionsBot, messageText, postAuthorId } from "./slack-events.js";

type WebClient = InstanceType<typeof webApi.WebClient>;

export interface SlackDirectoryOptions {
  /** The team id (ThreadTarget.workspace of Slack sessions). */
  readonly workspace: string;
  /** The bot's user id (auth.test `user_id`). */
  readonly botUserId: string;
  /** The name people invite and mention the bot by ("coworker"). */
  readonly botName: string;
  /** Most result pages read when listing channels or members (default 10, 1,000 per page). */
  readonly maxPages?: number;
}

const channelSchema = z.looseObject({
  id: z.string().min(1),
  name: z.string().optional(),
  name_normalized: z.string().optional(),
  is_im: z.boolean().optional(),
  is_mpim: z.boolean().optional(),
  is_private: z.boolean().optional(),
  is_archived: z.boolean().optional(),
  is_member: z.boolean().optional(),
});
type SlackChannel = z.infer<typeof channelSchema>;

const nextCursor = z
  .looseObject({ next_cursor: z.string().optional() })
  .optional()
  .transform((m) => m?.next_cursor || undefined);
const infoSchema = z.looseObject({ channel: channelSchema });
const listSchema = z.looseObject({ channels: z.array(channelSchema), response_metadata: nextCursor });
const membersSchema = z.looseObject({ members: z.array(z.string()), response_metadata: nextCursor });
const messageSchema = z.looseObject({
  ts: z.string().regex(/^\d+(\.\d+)?$/),
  text: z.string().optional(),
  /** What Slack clients show; read by messageText, which falls back to `text` when absent or malformed. */
  blocks: z.unknown().optional(),
  user: z.string().optional(),
  bot_id: z.string().optional(),
  username: z.string().optional(),
  subtype: z.string().optional(),
  thread_ts: z.string().optional(),
  user_profile: z
    .looseObject({ display_name: z.string().optional(), real_name: z.string().optional() })
    .optional(),
  bot_profile: z.looseObject({ name: z.string().optional() }).optional(),
});
const historySchema = z.looseObject({ messages: z.array(messageSchema) });
/** Message subtypes that are people (or bots) talking; joins, topic changes and the like are skipped. */
const CONTENT_SUBTYPES = new Set([undefined, "bot_message", "thread_broadcast", "file_share", "me_message"]);
const CHANNEL_ID = /^[CGD][A-Z0-9]{2,}$/;
/** `<#C…|label>`, the label on one line: a label with line breaks or controls is no channel link. */
const CHANNEL_LINK = /^<#([CGD][A-Z0-9]{2,})(?:\|([^>\p{Cc}\p{Zl}\p{Zp}]*))?>$/u;
const CHANNEL_NAME = /^[\p{Ll}\p{N}][\p{Ll}\p{N}._-]{0,79}$/u;

/** Slack's error code of a failed Web API call ("ratelimited" for 429s), if it is one. */
export function slackErrorOf(
  error: unknown,
): { readonly code: string; readonly retryAfterS?: number } | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const e = error as { code?: unknown; data?: { error?: unknown }; retryAfter?: unknown };
  if (e.code === "slack_webapi_rate_limited_error")
    return {
      code: "ratelimited",
      ...(typeof e.retryAfter === "number" ? { retryAfterS: e.retryAfter } : {}),
    };
  if (e.code === "slack_webapi_platform_error" && typeof e.data?.error === "string")
    return { code: e.data.error };
  return undefined;
}

/** Slack channels, members and history for subscriptions. */
export class SlackDirectory implements PlatformDirectory {
  readonly platform = "slack";
  readonly workspace: string;
  readonly bot: BotIdentity;
  private readonly maxPages: number;
  private readonly invite: string;

  constructor(
    private readonly client: WebClient,
    options: SlackDirectoryOptions,
  ) {
    this.workspace = options.workspace;
    this.bot = Object.freeze({ userId: options.botUserId, names: Object.freeze([options.botName]) });
    this.maxPages = options.maxPages ?? 10;
    this.invite = `/invite @${options.botName}`;
  }

  /** Find a channel by id, `<#id|name>`, #name or name. */
  async resolveChannel(ref: string): Promise<ResolveResult> {
    const link = CHANNEL_LINK.exec(ref);
    const id = link?.[1] ?? (CHANNEL_ID.test(ref) ? ref : undefined);
    if (id !== undefined) {
      const channel = await this.info(id);
      if (!channel)
        return {
          ok: false,
          error: `I can't find channel ${ref}: it does not exist, or it is private and I am not in it (invite me there with ${this.invite}).`,
        };
      return this.resolved(channel);
    }
    const name = ref.replace(/^#/, "").toLowerCase();
    if (!CHANNEL_NAME.test(name))
      return { ok: false, error: `"${ref}" is not a Slack channel id (C0123…) or channel name (#deploys).` };
    const channel = await this.findByName(name);
    if (!channel)
      return {
        ok: false,
        error: `I see no channel named #${name}. If it is private, invite me there first with ${this.invite}.`,
      };
    return this.resolved(channel);
  }

  /** Slack channel ids never change: the id itself. */
  async canonicalChannel(channel: string): Promise<string> {
    return channel;
  }

  /** conversations.members, page by page, until the user turns up. */
  async isMember(channel: string, userId: string): Promise<boolean> {
    let cursor: string | undefined;
    for (let page = 0; page < this.maxPages; page += 1) {
      const raw = await this.call(() =>
        this.client.conversations.members({ channel, limit: 1_000, ...(cursor ? { cursor } : {}) }),
      );
      const parsed = membersSchema.parse(raw);
      if (parsed.members.includes(userId)) return true;
      cursor = parsed.response_metadata;
      if (cursor === undefined) return false;
    }
    throw new Error(
      `the channel has more than ${this.maxPages * 1_000} members; I could not finish the check`,
    );
  }

  /** Member already, or join a public channel; a private one needs an invite. */
  async ensureBotCanRead(channel: string): Promise<ReadAccess> {
    const info = await this.info(channel);
    if (!info) return { ok: false, whatToDo: `invite me to the channel with ${this.invite}.` };
    const label = info.name ? `#${info.name}` : channel;
    if (info.is_member) return { ok: true };
    if (info.is_archived) return { ok: false, whatToDo: `${label} is archived; unarchive it first.` };
    if (info.is_private || info.is_mpim)
      return { ok: false, whatToDo: `${label} is private: invite me to it with ${this.invite} in ${label}.` };
    try {
      await this.client.conversations.join({ channel });
      return { ok: true };
    } catch (error) {
      const code = slackErrorOf(error)?.code;
      if (code === "missing_scope")
        return {
          ok: false,
          whatToDo: `the Slack app lacks the channels:join scope, so I cannot join ${label} myself: invite me with ${this.invite} in ${label}, or add the scope.`,
        };
      return {
        ok: false,
        whatToDo: `joining ${label} failed (${code ?? (error instanceof Error ? error.message : String(error))}); invite me with ${this.invite} in ${label}.`,
      };
    }
  }

  /** Recent messages (or a thread's replies), oldest first. Throws a readable error when rate-limited. */
  async history(channel: string, options: HistoryOptions): Promise<HistoryPage> {
    const oldest = options.since === undefined ? undefined : (Date.parse(options.since) / 1_000).toFixed(6);
    const args = {
      channel,
      limit: Math.min(options.limit, 200),
      ...(oldest ? { oldest, inclusive: true } : {}),
    };
    const raw = await this.call(() =>
      options.thread === undefined
        ? this.client.conversations.history(args)
        : this.client.conversations.replies({ ...args, ts: options.thread }),
    );
    const entries = historySchema
      .parse(raw)
      .messages.filter((m) => CONTENT_SUBTYPES.has(m.subtype))
      .map((message) => toEntry(message, this.bot.userId))
      .sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
    return { entries };
  }

  private resolved(channel: SlackChannel): ResolveResult {
    if (channel.is_im)
      return { ok: false, error: "That is a direct-message conversation; only channels can be watched." };
    const name = channel.name ? `#${channel.name}` : channel.id;
    // Not a Telegram broadcast channel: on Slack, posting access is membership (posting-access.ts).
    return { ok: true, channel: channel.id, name, broadcast: false };
  }

  /** conversations.info, or undefined when Slack does not show the channel to the bot. */
  private async info(channel: string): Promise<SlackChannel | undefined> {
    try {
      return infoSchema.parse(await this.client.conversations.info({ channel })).channel;
    } catch (error) {
      if (slackErrorOf(error)?.code === "channel_not_found") return undefined;
      throw this.readable(error);
    }
  }

  private async findByName(name: string): Promise<SlackChannel | undefined> {
    let cursor: string | undefined;
    for (let page = 0; page < this.maxPages; page += 1) {
      const raw = await this.call(() =>
        this.client.conversations.list({
          types: "public_channel,private_channel",
          exclude_archived: true,
          limit: 1_000,
          ...(cursor ? { cursor } : {}),
        }),
      );
      const parsed = listSchema.parse(raw);
      const hit = parsed.channels.find((c) => c.name === name || c.name_normalized === name);
      if (hit) return hit;
      cursor = parsed.response_metadata;
      if (cursor === undefined) return undefined;
    }
    return undefined;
  }

  private async call<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw this.readable(error);
    }
  }

  private readable(error: unknown): Error {
    const slack = slackErrorOf(error);
    if (slack?.code === "ratelimited")
      return new Error(
        `Slack is rate-limiting these reads (history is limited to about one request a minute for this app); try again in ${slack.retryAfterS ?? 60} s`,
      );
    if (slack) return new Error(`Slack answered "${slack.code}"`);
    return error instanceof Error ? error : new Error(String(error));
  }
}

/**
 * A history message as a buffer entry. Its text is read as a live message's is (messageText:
 * blocks first, then `text`, labels and markup dropped), the bot's mention kept as `@U…` as for
 * observed channel talk; whether it mentions the bot is kept beside it, since `<@U…>` is gone.
 */
function toEntry(message: z.infer<typeof messageSchema>, botUserId: string): BufferEntryInput {
  const profile = message.user_profile;
  const name =
    profile?.display_name ||
    profile?.real_name ||
    message.bot_profile?.name ||
    message.username ||
    message.user;
  const thread =
    message.thread_ts !== undefined && message.thread_ts !== message.ts ? message.thread_ts : undefined;
  return {
    id: message.ts,
    author: {
      id: postAuthorId(message),
      name: name ?? "unknown",
      isBot: isBotPost(message),
    },
    at: new Date(Number.parseFloat(message.ts) * 1_000).toISOString(),
    text: messageText(message, ""),
    ...(thread !== undefined ? { thread } : {}),
    ...(mentionsBot(message, botUserId) ? { mentionsBot: true } : {}),
  };
}
