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

/** What a call is given: the caller's abort, how long it may take, and what its failure is. */
export interface JsonCallLimits {
  readonly signal?: AbortSignalLike | undefined;
  readonly timeoutMs: number;
  /**
   * What the call rejects with when it gets no answer (a network failure, the caller's abort,
   * `timeoutMs` passed: isTimeout tells) or an answer that is not JSON, given that error.
   */
  readonly failure: (error: unknown) => Error;
}

/** JSON.stringify's replacer leaving null fields out, as grammY does. */
function withoutNull(_key: string, value: unknown): unknown {
  return value ?? undefined;
}

/**
 * Post `payload` to `url` and parse the answer. Rejects with `failure`'s error where postText
 * rejects — on a network failure, the caller's abort, or once `timeoutMs` pass — and on an answer
 * that is not JSON (one `then` for both, where a `then` and a `catch` cost a promise more).
 */
export function postJsonCall<R>(
  url: string,
  payload: unknown,
  { signal, timeoutMs, failure }: JsonCallLimits,
): Promise<ApiResponse<R>> {
  const plain = JSON.stringify(payload ?? {});
  // A replacer costs a call per field: it is needed only where a null was written.
  const body = plain.includes("null") ? JSON.stringify(payload ?? {}, withoutNull) : plain;
  return postText(url, { headers: JSON_HEADERS, body, signal, timeoutMs }).then(
    (answer) => {
      try {
        return answer.parsed() as ApiResponse<R>;
      } catch (error) {
        throw failure(error);
      }
    },
    (error: unknown) => {
      throw failure(error);
    },
  );
}

/** Whether a call failed because its `timeoutMs` passed. */
export function isTimeout(error: unknown): boolean {
  return error instanceof DOMException && error.name === "TimeoutError";
}
