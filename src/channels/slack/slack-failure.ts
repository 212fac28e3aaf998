/**
 * Slack failures as ServiceFailures: an unreachable API (network error, 5xx) is told apart from a
 * rejected token (invalid_auth, token_revoked …), a rate limit and a misconfigured app (missing
 * Socket Mode, wrong token kind), each with its fix. Used when the channel connects.
 */
import { webApi } from "@slack/bolt";
import { messageOf, networkCode, platformUnreachable, ServiceFailure } from "../../core/failure.js";
import { slackErrorCode } from "./slack-api.js";

const REJECTED = new Set([
  "invalid_auth",
  "not_authed",
  "account_inactive",
  "token_revoked",
  "token_expired",
  "no_permission",
  "ekm_access_denied",
  "user_removed_from_team",
  "team_disabled",
]);
const MISCONFIGURED = new Set(["not_allowed_token_type", "missing_scope", "invalid_arguments"]);
/** Codes of Slack being unavailable for now: retried, like a network failure. */
const TEMPORARY = new Set(["internal_error", "service_unavailable", "fatal_error", "request_timeout"]);

/** Which token a failed call used, for the wording of the fix. */
export type SlackTokenRole = "bot" | "app";

const TOKEN_FIX: Readonly<Record<SlackTokenRole, string>> = {
  bot: "put the Bot User OAuth Token (xoxb-…, OAuth & Permissions) in SLACK_BOT_TOKEN; reinstall the app if it was revoked",
  app: "enable Socket Mode and put an App-Level Token with connections:write (xapp-…) in SLACK_APP_TOKEN",
};

/**
 * How an error code none of the lists above names is taken: as a misconfigured app (not retried),
 * or as Slack being unavailable for now (retried).
 */
type UnknownCode = "misconfigured" | "unavailable";

/** Classify a failed Slack call made with the `role` token while connecting. */
export function slackFailure(
  error: unknown,
  role: SlackTokenRole,
  step: string,
  unknownCode: UnknownCode = "misconfigured",
): ServiceFailure {
  if (error instanceof ServiceFailure) return error;
  const code = slackErrorCode(error);
  const cause = { cause: error };
  if (code === "ratelimited")
    return new ServiceFailure(
      "Slack",
      "rate-limited",
      `${step}: rate limited`,
      "wait; Coworker retries",
      cause,
    );
  if (code !== undefined && REJECTED.has(code))
    return new ServiceFailure("Slack", "rejected", `${step}: ${code}`, TOKEN_FIX[role], cause);
  if (code !== undefined && MISCONFIGURED.has(code))
    return new ServiceFailure("Slack", "misconfigured", `${step}: ${code}`, TOKEN_FIX[role], cause);
  if (code !== undefined && TEMPORARY.has(code)) return slackUnavailable(step, code, cause);
  const sdkCode = (error as { code?: unknown } | undefined)?.code;
  const network = networkCode(error);
  if (
    network !== undefined ||
    sdkCode === webApi.ErrorCode.RequestError ||
    sdkCode === webApi.ErrorCode.HTTPError
  ) {
    const why = network ?? messageOf(error);
    return platformUnreachable(
      "Slack",
      `${step}: ${why}`,
      { host: "slack.com", setting: "SLACK_API_URL" },
      cause,
    );
  }
  if (code !== undefined && unknownCode === "unavailable") return slackUnavailable(step, code, cause);
  if (code !== undefined)
    return new ServiceFailure("Slack", "misconfigured", `${step}: ${code}`, TOKEN_FIX[role], cause);
  return new ServiceFailure(
    "Slack",
    "unreachable",
    `${step}: ${messageOf(error)}`,
    "check network access to Slack; Coworker retries",
    cause,
  );
}

/** Slack answered `code` as a failure of its own: it is unavailable for now, and retried. */
function slackUnavailable(step: string, code: string, cause: { cause: unknown }): ServiceFailure {
  return new ServiceFailure(
    "Slack",
    "unreachable",
    `${step}: ${code}`,
    "Slack answered with an error; Coworker retries",
    cause,
  );
}

/**
 * Classify a failed Socket Mode connection (apps.connections.open, or the socket itself) as
 * slackFailure does, with the one rule Socket Mode adds: a code it does not know is taken as Slack
 * being unavailable for now and retried (as the SDK's own client retried it), not as a
 * misconfigured app.
 */
export function socketModeFailure(error: unknown): ServiceFailure {
  return slackFailure(error, "app", "Socket Mode (apps.connections.open)", "unavailable");
}

/** The HTTP events receiver could not listen (port taken, no permission). */
export function listenFailure(error: unknown, port: number): ServiceFailure {
  const code = (error as { code?: unknown } | undefined)?.code;
  const reason = code === "EADDRINUSE" ? `port ${port} is already in use` : messageOf(error);
  return new ServiceFailure(
    "Slack",
    "misconfigured",
    `the HTTP events receiver cannot listen: ${reason}`,
    "set slack.http.port to a free port, or use Socket Mode (SLACK_APP_TOKEN)",
    { cause: error },
  );
}
