/**
 * Telegram Bot API failures as ServiceFailures: a Bot API that cannot be reached (network error,
 * 5xx) is told apart from a rejected token (401, or 404 for a token the API does not know), a
 * rate limit (429), and a misconfiguration (409: another process polls this token or a webhook
 * is set; other 4xx), each with its fix. Used when the channel connects.
 */
import { GrammyError, HttpError } from "grammy";
import { messageOf, networkCode, platformUnreachable, ServiceFailure } from "../../core/failure.js";

const TOKEN_FIX =
  "copy the bot's token from @BotFather (/mybots → API Token) into TELEGRAM_BOT_TOKEN; revoked tokens must be replaced";

/** Classify a failed Bot API call made while connecting. */
export function telegramFailure(error: unknown, step: string): ServiceFailure {
  if (error instanceof ServiceFailure) return error;
  const cause = { cause: error };
  if (error instanceof GrammyError) {
    const what = `${step}: ${error.error_code} ${error.description}`;
    if (error.error_code === 401 || error.error_code === 404)
      return new ServiceFailure("Telegram", "rejected", what, TOKEN_FIX, cause);
    if (error.error_code === 429)
      return new ServiceFailure("Telegram", "rate-limited", what, "wait; Coworker retries", cause);
    if (error.error_code === 409)
      return new ServiceFailure(
        "Telegram",
        "misconfigured",
        what,
        "stop the other process polling this bot token, or remove its webhook (or configure telegram.webhook here)",
        cause,
      );
    if (error.error_code >= 500)
      return new ServiceFailure(
        "Telegram",
        "unreachable",
        what,
        "Telegram is having trouble; Coworker retries",
        cause,
      );
    return new ServiceFailure(
      "Telegram",
      "misconfigured",
      what,
      "check TELEGRAM_API_ROOT and the telegram section",
      cause,
    );
  }
  // Never the fetch error's own message: it quotes the URL, which carries the token.
  const why =
    networkCode(error) ?? (error instanceof HttpError ? "network request failed" : messageOf(error));
  const where = { host: "api.telegram.org", setting: "TELEGRAM_API_ROOT" };
  return platformUnreachable("Telegram", `${step}: ${why}`, where, cause);
}
