/**
 * Doctor checks for the chat platforms: Slack (auth.test with the bot token and the scopes the
 * adapter needs; apps.connections.open with the app token) and Telegram (getMe, plus a note on
 * group privacy mode, which hides group messages from channel subscriptions).
 */
import { z } from "zod";
import type { CoworkerConfig } from "../config/schema.js";
import type { CheckResult, DoctorCheck } from "./doctor.js";
import { type FetchLike, ProbeNetworkError, probe } from "./http-probe.js";

/** Bot scopes the Slack adapter uses (mentions, DMs, threads, files, names, slash command). */
export const SLACK_REQUIRED_SCOPES: readonly string[] = [
  "app_mentions:read",
  "channels:history",
  "groups:history",
  "im:history",
  "mpim:history",
  "chat:write",
  "files:read",
  "users:read",
  "commands",
];

const slackReply = z.object({
  ok: z.boolean(),
  error: z.string().optional(),
  user: z.string().optional(),
  team: z.string().optional(),
  team_id: z.string().optional(),
});

const telegramReply = z.object({
  ok: z.boolean(),
  description: z.string().optional(),
  result: z
    .object({
      username: z.string().optional(),
      can_read_all_group_messages: z.boolean().optional(),
    })
    .optional(),
});

function networkFailure(error: unknown, fix: string): CheckResult {
  if (error instanceof ProbeNetworkError) return { status: "fail", summary: error.message, fix };
  throw error;
}

async function slackCall(
  fetchImpl: FetchLike,
  apiUrl: string,
  method: string,
  token: string,
  signal: AbortSignal,
): Promise<{
  readonly reply: z.infer<typeof slackReply> | undefined;
  readonly headers: Headers;
  status: number;
}> {
  const base = apiUrl.endsWith("/") ? apiUrl : `${apiUrl}/`;
  const response = await probe(fetchImpl, new URL(method, base), {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/x-www-form-urlencoded" },
    signal,
  });
  const parsed = slackReply.safeParse(response.body);
  return {
    reply: parsed.success ? parsed.data : undefined,
    headers: response.headers,
    status: response.status,
  };
}

function slackBotCheck(slack: CoworkerConfig["slack"], fetchImpl: FetchLike): DoctorCheck {
  return {
    name: "Slack bot token",
    async run(signal) {
      const token = slack.bot_token;
      if (token === undefined)
        return { status: "skip", summary: "not configured (set SLACK_BOT_TOKEN to use Slack)" };
      const reinstall =
        "copy the Bot User OAuth Token (xoxb-…) from your app's OAuth & Permissions page into SLACK_BOT_TOKEN";
      if (slack.app_token === undefined && slack.signing_secret === undefined) {
        return {
          status: "fail",
          summary: "a bot token alone cannot receive events",
          fix: "set SLACK_APP_TOKEN (xapp-…, Socket Mode) or SLACK_SIGNING_SECRET (HTTP events)",
        };
      }
      try {
        const { reply, headers, status } = await slackCall(
          fetchImpl,
          slack.api_url,
          "auth.test",
          token,
          signal,
        );
        if (reply === undefined)
          return {
            status: "fail",
            summary: `auth.test answered HTTP ${status} without a Slack reply`,
            fix: "check SLACK_API_URL",
          };
        if (!reply.ok)
          return {
            status: "fail",
            summary: `token rejected (${reply.error ?? "unknown error"})`,
            fix: reinstall,
          };
        const who = `authenticated as @${reply.user ?? "?"} in ${reply.team ?? "?"}${reply.team_id ? ` (${reply.team_id})` : ""}`;
        const granted = headers.get("x-oauth-scopes");
        if (granted === null)
          return {
            status: "warn",
            summary: `${who}; Slack did not report the token's scopes`,
            fix: `make sure the app has: ${SLACK_REQUIRED_SCOPES.join(", ")}`,
          };
        const have = new Set(granted.split(",").map((scope) => scope.trim()));
        const missing = SLACK_REQUIRED_SCOPES.filter((scope) => !have.has(scope));
        if (missing.length > 0) {
          return {
            status: "fail",
            summary: `${who}; missing scopes: ${missing.join(", ")}`,
            fix: "add the missing bot scopes under OAuth & Permissions (or reinstall from the app manifest), then reinstall the app to the workspace",
          };
        }
        return { status: "pass", summary: `${who}; all ${SLACK_REQUIRED_SCOPES.length} scopes granted` };
      } catch (error) {
        return networkFailure(error, "check network access to Slack, or SLACK_API_URL");
      }
    },
  };
}

function slackAppCheck(slack: CoworkerConfig["slack"], fetchImpl: FetchLike): DoctorCheck {
  return {
    name: "Slack app token (Socket Mode)",
    async run(signal) {
      const token = slack.app_token;
      if (token === undefined) {
        return slack.bot_token !== undefined && slack.signing_secret !== undefined
          ? { status: "skip", summary: "HTTP events mode (SLACK_SIGNING_SECRET set, no app token)" }
          : { status: "skip", summary: "not configured" };
      }
      try {
        const { reply, status } = await slackCall(
          fetchImpl,
          slack.api_url,
          "apps.connections.open",
          token,
          signal,
        );
        if (reply?.ok === true) return { status: "pass", summary: "Socket Mode connection can be opened" };
        return {
          status: "fail",
          summary: `apps.connections.open failed (${reply?.error ?? `HTTP ${status}`})`,
          fix: "enable Socket Mode and create an App-Level Token with connections:write (xapp-…) under Basic Information; put it in SLACK_APP_TOKEN",
        };
      } catch (error) {
        return networkFailure(error, "check network access to Slack, or SLACK_API_URL");
      }
    },
  };
}

function telegramCheck(telegram: CoworkerConfig["telegram"], fetchImpl: FetchLike): DoctorCheck {
  return {
    name: "Telegram bot token",
    async run(signal) {
      const token = telegram.bot_token;
      if (token === undefined)
        return { status: "skip", summary: "not configured (set TELEGRAM_BOT_TOKEN to use Telegram)" };
      const root = telegram.api_root.replace(/\/+$/, "");
      try {
        const response = await probe(fetchImpl, new URL(`${root}/bot${token}/getMe`), { signal });
        const parsed = telegramReply.safeParse(response.body);
        if (!parsed.success || !parsed.data.ok || parsed.data.result === undefined) {
          const why = parsed.success
            ? (parsed.data.description ?? `HTTP ${response.status}`)
            : `HTTP ${response.status}`;
          return {
            status: "fail",
            summary: `getMe failed (${why})`,
            fix: "get the bot's token from @BotFather (/mybots → API Token) and put it in TELEGRAM_BOT_TOKEN",
          };
        }
        const bot = parsed.data.result;
        const notes =
          bot.can_read_all_group_messages === true
            ? []
            : [
                "privacy mode is on: in groups the bot sees only commands, mentions and replies. " +
                  "For channel subscriptions, turn it off in @BotFather (/setprivacy → Disable) or make the bot a group admin.",
              ];
        const users = telegram.allowed_users.length;
        return {
          status: "pass",
          summary: `bot @${bot.username ?? "?"}; ${users === 0 ? "allowed users: none configured (TELEGRAM_ALLOWED_USERS)" : `${users} allowed user(s)`}`,
          notes,
        };
      } catch (error) {
        return networkFailure(error, "check network access to api.telegram.org, or TELEGRAM_API_ROOT");
      }
    },
  };
}

/** The Slack and Telegram checks for `config`. */
export function platformChecks(config: CoworkerConfig, fetchImpl: FetchLike): DoctorCheck[] {
  return [
    slackBotCheck(config.slack, fetchImpl),
    slackAppCheck(config.slack, fetchImpl),
    telegramCheck(config.telegram, fetchImpl),
  ];
}
