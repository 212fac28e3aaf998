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
]);
const MISCONFIGURED = new Set(["not_allowed_token_type", "missing_scope", "invalid_arguments"]);

/** Which token a failed call used, for the wording of the fix. */
export type SlackTokenRole = "bot" | "app";

const TOKEN_FIX: Readonly<Record<SlackTokenRole, string>> = {
  bot: "put the Bot User OAuth Token (xoxb-…, OAuth & Permissions) in SLACK_BOT_TOKEN; reinstall the app if it was revoked",
  app: "enable Socket Mode and put an App-Level Token with connections:write (xapp-…) in SLACK_APP_TOKEN",
};

/** Classify a failed Slack call made with the `role` token while connecting. */
export function slackFailure(error: unknown, role: SlackTokenRole, step: string): ServiceFailure {
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

/**
 * Codes of apps.connections.open that no retry can mend: a refused app token (as the SDK's own
 * Socket Mode client judged it), or one without Socket Mode's scope.
 */
const SOCKET_MODE_FINAL = new Set([
  ...REJECTED,
  "user_removed_from_team",
  "team_disabled",
  "not_allowed_token_type",
  "missing_scope",
]);

/**
 * Classify a failed Socket Mode connection (apps.connections.open, or the socket itself): a code
 * in SOCKET_MODE_FINAL as slackFailure does; any other code Slack answers with (internal_error,
 * service_unavailable, one unknown to us) as Slack being unavailable for now, which is retried, as
 * the SDK's own client retried it.
 */
export function socketModeFailure(error: unknown): ServiceFailure {
  const step = "Socket Mode (apps.connections.open)";
  const code = slackErrorCode(error);
  if (code === undefined || code === "ratelimited" || SOCKET_MODE_FINAL.has(code))
    return slackFailure(error, "app", step);
  return new ServiceFailure(
    "Slack",
    "unreachable",
    `${step}: ${code}`,
    "Slack answered with an error; Coworker retries",
    { cause: error },
  );
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
