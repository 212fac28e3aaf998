/**
 * Slack message and app_mention events: their validated shape, the decision whether the bot
 * should act on one (its own and other bots' messages — Slackbot's among them — edits, deletions
 * and housekeeping subtypes are ignored; channel posts need a mention unless they continue a
 * thread; a mention counts where people see it), and the text the agent reads of a message: what people see — the text its blocks show
 * when it has any (slack-shown-text.ts), else Slack's escaped text with <@U…>, <#C…|name> and
 * <url|label> as plain text.
 */
import { z } from "zod";
import { mrkdwnMentions, plainText, shownMentions, shownText } from "./slack-shown-text.js";

export const slackFileSchema = z.looseObject({
  id: z.string().min(1),
  name: z.string().optional(),
  title: z.string().optional(),
  mimetype: z.string().optional(),
  size: z.number().int().nonnegative().optional(),
  url_private: z.string().optional(),
  url_private_download: z.string().optional(),
  mode: z.string().optional(),
  /** "slack_audio" for an audio clip recorded in Slack. */
  subtype: z.string().optional(),
  /** Who uploaded (or recorded) the file. */
  user: z.string().optional(),
  /** A clip's length in ms, which Slack gives for audio and video clips it recorded. */
  duration_ms: z.number().nonnegative().optional(),
});
export type SlackFile = z.infer<typeof slackFileSchema>;

export const messageEventSchema = z.looseObject({
  type: z.enum(["message", "app_mention"]),
  subtype: z.string().optional(),
  hidden: z.boolean().optional(),
  channel: z.string().min(1),
  channel_type: z.string().optional(),
  user: z.string().optional(),
  bot_id: z.string().optional(),
  username: z.string().optional(),
  bot_profile: z.looseObject({ name: z.string().optional() }).optional(),
  text: z.string().optional(),
  /** What Slack clients show; validated where it is read (messageText), so a bad one costs only itself. */
  blocks: z.unknown().optional(),
  ts: z.string().regex(/^\d+\.\d+$/),
  thread_ts: z
    .string()
    .regex(/^\d+\.\d+$/)
    .optional(),
  client_msg_id: z.string().optional(),
  /** Set on an app_mention Slack sends again because the message was edited. */
  edited: z.looseObject({}).optional(),
  team: z.string().optional(),
  files: z.array(slackFileSchema).optional(),
});
export type MessageEvent = z.infer<typeof messageEventSchema>;

/** Subtypes that are a person (or an allowed bot) saying something. Everything else is ignored. */
const SPOKEN_SUBTYPES = new Set([undefined, "file_share", "thread_broadcast", "me_message", "bot_message"]);

/**
 * Slackbot's user id. Slackbot posts with no bot_id and no subtype, like a person, but what it
 * posts others set up (a `/remind` someone wrote, a workflow's step): nobody's own request.
 */
export const SLACKBOT_USER_ID = "USLACKBOT";

/** Whether a post is a bot's: an app's (a bot_id, or a bot_message) or Slackbot's. */
export function isBotPost(post: {
  readonly bot_id?: string | undefined;
  readonly subtype?: string | undefined;
  readonly user?: string | undefined;
}): boolean {
  return post.bot_id !== undefined || post.subtype === "bot_message" || post.user === SLACKBOT_USER_ID;
}

/**
 * Who wrote a post, as channel talk names them — live or read from history alike: a bot by its
 * bot id (its user id, or the name it posted under, when it has none), a person by user id.
 */
export function postAuthorId(post: {
  readonly bot_id?: string | undefined;
  readonly subtype?: string | undefined;
  readonly user?: string | undefined;
  readonly username?: string | undefined;
}): string {
  return isBotPost(post) ? (post.bot_id ?? post.user ?? post.username ?? "bot") : (post.user ?? "unknown");
}

export interface BotIdentity {
  readonly userId: string;
  readonly botId: string;
  readonly teamId: string;
}

export type Decision =
  | { readonly act: false; readonly reason: string }
  | {
      readonly act: true;
      readonly kind: "dm" | "channel";
      /** The author: a user id, or the bot id of an allowed bot. */
      readonly author: string;
      /** A thread reply without a mention: act only if the bot takes part in that thread. */
      readonly needsThread: boolean;
    };

export interface DecideOptions {
  readonly bot: BotIdentity;
  readonly allowedBots: ReadonlySet<string>;
  readonly requireMentionInThreads: boolean;
  /** The time now, in ms (an edit is judged by the age of the message it edits). */
  readonly nowMs: number;
}

/**
 * How old a message may be when an edit of it still counts as a request: someone adding the
 * mention they forgot does it within minutes. Slack sends an edited message's app_mention again;
 * an edit of an older one would run its new text as a fresh turn, though it may have been
 * answered long ago (the session layer remembers answered messages for a while, not forever).
 */
export const EDIT_WINDOW_MS = 60 * 60 * 1_000;

/**
 * Whether a message — live or from history — mentions the bot where people see it: in its blocks
 * when it has readable ones (a mention only in `text`, the hidden fallback, does not count), else
 * in its `text`.
 */
export function mentionsBot(
  message: { readonly text?: string | undefined; readonly blocks?: unknown },
  botUserId: string,
): boolean {
  return shownMentions(message.blocks, botUserId) ?? mrkdwnMentions(message.text ?? "", botUserId);
}

/**
 * Whether a message event is channel talk worth reporting to subscriptions: a person's or
 * another bot's post (not the bot's own, not an edit or housekeeping subtype), outside DMs, and
 * only the `message` twin of a mention.
 */
export function isChannelTalk(event: MessageEvent, bot: BotIdentity): boolean {
  if (event.type !== "message" || event.channel_type === "im") return false;
  if (!SPOKEN_SUBTYPES.has(event.subtype) || event.hidden) return false;
  return event.user !== bot.userId && event.bot_id !== bot.botId;
}

/** Decide whether the bot acts on a message or app_mention event. */
export function decide(event: MessageEvent, options: DecideOptions): Decision {
  const { bot } = options;
  if (!SPOKEN_SUBTYPES.has(event.subtype) || event.hidden) {
    return { act: false, reason: `subtype ${event.subtype ?? "hidden"}` };
  }
  if (event.user === bot.userId || event.bot_id === bot.botId) return { act: false, reason: "own message" };
  if (event.edited && options.nowMs - Number(event.ts) * 1_000 > EDIT_WINDOW_MS)
    return { act: false, reason: "an edit of an older message" };
  // Only the ids Slack sets: `username` and `bot_profile.name` are whatever the poster chose. A
  // bot's post is its allowed id's (its bot id, else its bot user id), as the access check reads it.
  const author = isBotPost(event)
    ? [event.bot_id, event.user].find((id): id is string => !!id && options.allowedBots.has(id))
    : (event.user ?? "");
  if (author === undefined) return { act: false, reason: "other bot" };
  if (author.length === 0) return { act: false, reason: "no author" };
  if (event.channel_type === "im") return { act: true, kind: "dm", author, needsThread: false };
  // An app_mention too: Slack sends one for a mention in `text`, which people may never see.
  if (mentionsBot(event, bot.userId)) {
    return { act: true, kind: "channel", author, needsThread: false };
  }
  if (event.thread_ts !== undefined && event.thread_ts !== event.ts && !options.requireMentionInThreads) {
    return { act: true, kind: "channel", author, needsThread: true };
  }
  return { act: false, reason: "channel message without a mention" };
}

/**
 * The text the agent reads of a message — a live one or one read from history, alike: the text
 * its blocks show, which is what Slack clients show (a message posted through the API can say
 * something else in `text`, its notification fallback), else plainText of `text` — when it has
 * no blocks, or malformed ones. The bot's own mention is left out.
 */
export function messageText(
  message: { readonly text?: string | undefined; readonly blocks?: unknown },
  botUserId: string,
): string {
  return shownText(message.blocks, botUserId) ?? plainText(message.text ?? "", botUserId);
}

/** When the platform says the message was sent, as ISO time. */
export function sentAtOf(ts: string): string {
  const millis = Math.round(Number(ts) * 1_000);
  return new Date(Number.isFinite(millis) ? millis : Date.now()).toISOString();
}
