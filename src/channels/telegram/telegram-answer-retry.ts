/**
 * Bounded retries of the Bot API's answers that ask for one, as a grammY API transformer: a 429
 * (Too Many Requests) is tried again once its `retry_after` has passed, unless that is longer than
 * the wait allowed (it then comes back at once), and a 5xx after 3 s, then 6, 12, … (at most an
 * hour; a 429 starts that count again). At most `maxRetryAttempts` retries, then the last answer
 * comes back; a wait ends, failing the call, when the call is aborted. Failures thrown rather than
 * answered (the network's) pass through: telegram-network-retry.ts retries those.
 *
 * This is what @grammyjs/auto-retry did with the channel's options, at one promise per call where
 * it cost four (an answer is looked at again only when it asks for a retry); unlike it, no wait
 * follows the last attempt.
 */
import type { Transformer } from "grammy";

/** Bounded retries of 429s and 5xx. */
export interface CallRetry {
  readonly maxRetryAttempts: number;
  readonly maxDelaySeconds: number;
}

type ApiSignal = Parameters<Transformer>[3];
type Answer = Awaited<ReturnType<Transformer>>;

/** The first wait after a 5xx, and the longest (each next one doubles). */
const FIRST_BACKOFF_SECONDS = 3;
const MAX_BACKOFF_SECONDS = 3600;

/** Wait `seconds`, or fail when the call is aborted meanwhile. */
function pause(seconds: number, signal: ApiSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const aborted = () => new Error("Request aborted while waiting between retries");
    if (signal?.aborted) return reject(aborted());
    const abort = () => {
      clearTimeout(timer);
      reject(aborted());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", abort);
      resolve();
    }, seconds * 1000);
    signal?.addEventListener("abort", abort);
  });
}

/** A grammY API transformer retrying 429 and 5xx answers within `retry`'s bounds (see the module comment). */
export function answerRetryTransformer({ maxRetryAttempts, maxDelaySeconds }: CallRetry): Transformer {
  return (prev, method, payload, signal) => {
    const attempt = (retriesLeft: number, backoffSeconds: number): Promise<Answer> =>
      prev(method, payload, signal).then((answer) => {
        if (answer.ok || retriesLeft === 0) return answer;
        const retryAfter = answer.parameters?.retry_after;
        if (typeof retryAfter === "number" && retryAfter <= maxDelaySeconds)
          return pause(retryAfter, signal).then(() => attempt(retriesLeft - 1, FIRST_BACKOFF_SECONDS));
        if (answer.error_code < 500) return answer;
        const next = Math.min(MAX_BACKOFF_SECONDS, backoffSeconds * 2);
        return pause(backoffSeconds, signal).then(() => attempt(retriesLeft - 1, next));
      });
    return attempt(maxRetryAttempts, FIRST_BACKOFF_SECONDS);
  };
}
