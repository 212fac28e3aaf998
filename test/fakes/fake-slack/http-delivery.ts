/**
 * Slack's side of the HTTP Events API for tests: POST a payload to the app's request URL signed
 * the way Slack signs it (`v0=` HMAC-SHA256 of `v0:<timestamp>:<body>` with the signing secret).
 */
import { createHmac } from "node:crypto";

export interface HttpDelivery {
  readonly status: number;
  readonly body: string;
  /** Milliseconds until the app answered (its ack). */
  readonly ackMs: number;
}

/** Sign `body` as Slack would at `timestamp` (seconds). */
export function slackSignature(secret: string, timestamp: number, body: string): string {
  return `v0=${createHmac("sha256", secret).update(`v0:${timestamp}:${body}`).digest("hex")}`;
}

/** Deliver a JSON payload (events) or a form payload (interactivity) to `url`. */
export async function deliverHttp(
  url: string,
  secret: string,
  payload: unknown,
  options: { form?: boolean; timestamp?: number; signature?: string } = {},
): Promise<HttpDelivery> {
  const body = options.form
    ? new URLSearchParams({ payload: JSON.stringify(payload) }).toString()
    : JSON.stringify(payload);
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const started = performance.now();
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": options.form ? "application/x-www-form-urlencoded" : "application/json",
      "x-slack-request-timestamp": String(timestamp),
      "x-slack-signature": options.signature ?? slackSignature(secret, timestamp, body),
    },
    body,
  });
  return { status: response.status, body: await response.text(), ackMs: performance.now() - started };
}
