/**
 * The shapes of platform tokens and ids in the config, each with a hint saying what a right value
 * looks like and where to find it. Checked at load time, so a Slack user token in the bot-token
 * slot or a Telegram @username in an id list fails before any network call instead of silently
 * never matching. Messages never repeat the value (it may be a secret).
 */
import { z } from "zod";
import { CONSOLE_PLATFORM } from "../core/console-platform.js";

const nonEmpty = z.string().trim().min(1, "must not be empty");

function prefixed(prefix: string, hint: string) {
  return nonEmpty.refine((value) => value.startsWith(prefix), `must start with "${prefix}" — ${hint}`);
}

/** `xoxb-…`: OAuth & Permissions → Bot User OAuth Token. */
export const slackBotToken = prefixed(
  "xoxb-",
  "use the Bot User OAuth Token (OAuth & Permissions), not a user (xoxp-) or app-level (xapp-) token",
);

/** `xapp-…`: Basic Information → App-Level Tokens (connections:write). */
export const slackAppToken = prefixed(
  "xapp-",
  "use an App-Level Token with connections:write (Basic Information → App-Level Tokens)",
);

/** `<bot id>:<secret>` as @BotFather hands it out. */
export const telegramBotToken = nonEmpty.regex(
  /^\d+:[A-Za-z0-9_-]+$/,
  'must look like "123456789:AA…" — copy the whole token @BotFather gave you (/mybots → API Token)',
);

/** Platform ids may be written as numbers in YAML (Telegram ids); they are kept as strings. */
function idList(pattern: RegExp, hint: string) {
  const id = z
    .union([nonEmpty, z.number().int()])
    .transform((value) => String(value).trim())
    .refine((value) => pattern.test(value), hint);
  return z.array(id).default([]);
}

/** Slack member ids: U… or W… (profile → ⋮ → Copy member ID). */
export const SLACK_USER_ID = /^[UW][A-Z0-9]+$/;
/** Telegram user ids: positive integers. */
export const TELEGRAM_USER_ID = /^\d+$/;
/** Slack channel ids: C… (channels), G… (private channels, group DMs), D… (DMs). */
const SLACK_CHANNEL_ID = /^[CGD][A-Z0-9]+$/;
/** Telegram chat ids: integers, negative for groups and channels. */
const TELEGRAM_CHAT_ID = /^-?\d+$/;

export const slackUserIds = idList(
  SLACK_USER_ID,
  'is not a Slack member id: they look like "U0123ABCD" (profile → ⋮ → Copy member ID)',
);
export const slackChannelIds = idList(
  SLACK_CHANNEL_ID,
  'is not a Slack channel id: they look like "C0123ABCD" (channel details, at the bottom)',
);
export const slackBotIds = idList(
  /^[BUW][A-Z0-9]+$/,
  'is not a Slack bot or member id: they look like "B0123ABCD" or "U0123ABCD"',
);
export const telegramUserIds = idList(
  TELEGRAM_USER_ID,
  "is not a Telegram user id: they are numbers such as 4567 (not @usernames; @userinfobot tells yours)",
);
export const telegramChatIds = idList(
  TELEGRAM_CHAT_ID,
  "is not a Telegram chat id: they are numbers such as -1001234567890 (not @names)",
);

/**
 * The id part an approver on a known platform must have. The console has one person, whoever types
 * at the terminal: `console:local` names them — beside Slack / Telegram they otherwise approve only
 * their own console sessions' calls, never a change that steers every session (authorisation.ts).
 */
const APPROVER_IDS: Readonly<Record<string, RegExp>> = {
  slack: SLACK_USER_ID,
  telegram: TELEGRAM_USER_ID,
  [CONSOLE_PLATFORM]: /^local$/,
};

/** `platform:id`, with the id in its platform's shape for Slack, Telegram and the console. */
export const approverIds = z
  .array(z.union([nonEmpty, z.number().int()]).transform((value) => String(value).trim()))
  .default([])
  .superRefine((ids, ctx) => {
    ids.forEach((id, index) => {
      const problem = approverProblem(id);
      if (problem !== undefined) ctx.addIssue({ code: "custom", path: [index], message: problem });
    });
  });

function approverProblem(id: string): string | undefined {
  const match = /^([a-z][a-z0-9_-]*):(\S+)$/.exec(id);
  if (!match) return 'is not platform-qualified: write "slack:U0123ABCD" or "telegram:4567"';
  const [, platform = "", userId = ""] = match;
  const pattern = APPROVER_IDS[platform];
  if (pattern === undefined || pattern.test(userId)) return undefined;
  if (platform === CONSOLE_PLATFORM)
    return `names no one: the console's one person is "${CONSOLE_PLATFORM}:local"`;
  return platform === "slack"
    ? "has no Slack member id after slack: (they look like U0123ABCD)"
    : "has no Telegram user id after telegram: (they are numbers such as 4567)";
}

/**
 * `approvals.per_channel`: approvers keyed `slack:<channel id>` or `telegram:<chat id>`. A key in
 * any other shape (a channel name such as "slack:general", a typo) would match no conversation and
 * silently grant nobody, so it is an error naming the key.
 */
export const perChannelApprovers = z
  .record(z.string(), approverIds)
  .default({})
  .superRefine((record, ctx) => {
    for (const key of Object.keys(record)) {
      const problem = perChannelKeyProblem(key);
      if (problem !== undefined) ctx.addIssue({ code: "custom", path: [key], message: problem });
    }
  });

function perChannelKeyProblem(key: string): string | undefined {
  const [platform, ...rest] = key.split(":");
  const id = rest.join(":");
  if (platform === "slack" && SLACK_CHANNEL_ID.test(id)) return undefined;
  if (platform === "telegram" && TELEGRAM_CHAT_ID.test(id)) return undefined;
  const quoted = JSON.stringify(key);
  if (platform === "slack" && rest.length > 0)
    return `the key ${quoted} has no Slack channel id after slack: — write "slack:C0123ABCD" (the id is in the channel details, at the bottom; a channel name does not work)`;
  if (platform === "telegram" && rest.length > 0)
    return `the key ${quoted} has no Telegram chat id after telegram: — write a number such as "telegram:-1001234567890" (not an @name)`;
  return `the key ${quoted} is not "slack:<channel id>" or "telegram:<chat id>" — e.g. "slack:C0123ABCD" or "telegram:-1001234567890"`;
}
