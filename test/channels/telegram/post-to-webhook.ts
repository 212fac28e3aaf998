/**
 * Posting an update to a Telegram channel's webhook in webhook mode, as Telegram does (with the
 * harness's path and secret), for the tests that watch how the webhook answers.
 */
import { TEST_WEBHOOK, WEBHOOK_SECRET } from "./harness.js";

/** Post `update` to the webhook of the channel listening on `port`: its status, or "no answer" when the connection was cut. */
export function postToWebhook(port: number | undefined, update: unknown): Promise<string> {
  return fetch(`http://127.0.0.1:${port}${TEST_WEBHOOK.path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": WEBHOOK_SECRET },
    body: JSON.stringify(update),
  }).then(
    (response) => `status ${response.status}`,
    () => "no answer",
  );
}
