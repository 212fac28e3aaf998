/**
 * A Bot API call with a JSON body (every call but uploads), posted on `postText` as grammY's
 * client would post it — the payload as JSON without its null fields, to the method's URL — and
 * answered with Telegram's JSON answer, whatever its HTTP status (an error answer says `ok: false`,
 * which grammY turns into a GrammyError). node-fetch's per-request wrapping was the largest single
 * cost of a reply (see channels/shared/text-post.ts), and grammY's client around it did nothing the
 * call's deadline does not (telegram-deadlines.ts, which calls this).
 */
import type { ApiResponse } from "grammy/types";
import { type AbortSignalLike, postText } from "../shared/text-post.js";

const JSON_HEADERS = Object.freeze({ "content-type": "application/json", connection: "keep-alive" });

/** What a call is given: the caller's abort, and how long it may take. */
export interface JsonCallLimits {
  readonly signal?: AbortSignalLike | undefined;
  readonly timeoutMs: number;
}

/** JSON.stringify's replacer leaving null fields out, as grammY does. */
function withoutNull(_key: string, value: unknown): unknown {
  return value ?? undefined;
}

/**
 * Post `payload` to `url` and parse the answer. Rejects as postText does — on a network failure,
 * the caller's abort, or once `timeoutMs` pass (isTimeout tells) — and on an answer that is not JSON.
 */
export function postJsonCall<R>(
  url: string,
  payload: unknown,
  limits: JsonCallLimits,
): Promise<ApiResponse<R>> {
  const plain = JSON.stringify(payload ?? {});
  // A replacer costs a call per field: it is needed only where a null was written.
  const body = plain.includes("null") ? JSON.stringify(payload ?? {}, withoutNull) : plain;
  return postText(url, { headers: JSON_HEADERS, body, ...limits }).then(
    (answer) => answer.parsed() as ApiResponse<R>,
  );
}

/** Whether a call failed because its `timeoutMs` passed. */
export function isTimeout(error: unknown): boolean {
  return error instanceof DOMException && error.name === "TimeoutError";
}
