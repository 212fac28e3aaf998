/**
 * Bounded retries of the Bot API's answers that ask for one, as a grammY API transformer: a 429
 * (Too Many Requests) is tried again once its `retry_after` has passed, unless that is longer than
 * the wait allowed (it then comes back at once), and a 5xx after 3 s, then 6, 12, … (at most an
 * hour; a 429 starts that count again). At most `maxRetryAttempts` retries, then the last answer
 * comes back; a wait ends, failing the call, when the call is aborted. A failure thrown rather than
 * answered (the network's) is retried within each attempt, as telegram-network-retry.ts does: one
 * handler of each attempt's outcome, where a layer of its own cost a promise per call.
 *
 * This is what @grammyjs/auto-retry did with the channel's options, at one promise per call where
 * it cost four (an answer is looked at again only when it asks for a retry); unlike it, no wait
 * follows the last attempt.
 */
import type { Transformer } from "grammy";
import { backoffMs } from "../../core/backoff.js";
import { pauseCall } from "./telegram-call-pause.js";
import { DEFAULT_NETWORK_RETRY, type NetworkRetryOptions, retryNetwork } from "./telegram-network-retry.js";

/** Bounded retries of 429s and 5xx. */
export interface CallRetry {
  readonly maxRetryAttempts: number;
  readonly maxDelaySeconds: number;
}

type Answer = Awaited<ReturnType<Transformer>>;

/** The first wait after a 5xx, and the longest (each next one doubles: core/backoff.ts). */
const FIRST_BACKOFF_MS = 3000;
const MAX_BACKOFF_MS = 3_600_000;

const ABORTED_BETWEEN_RETRIES = "Request aborted while waiting between retries";

/**
 * A grammY API transformer retrying 429 and 5xx answers within `retry`'s bounds, and network
 * failures within `network`'s in each attempt (see the module comment).
 */
export function answerRetryTransformer(
  { maxRetryAttempts, maxDelaySeconds }: CallRetry,
  network: NetworkRetryOptions = DEFAULT_NETWORK_RETRY,
): Transformer {
  return (prev, method, payload, signal) => {
    const send = () => prev(method, payload, signal);
    /** `serverErrors`: the 5xx answers since the call began or its last 429, which sets the backoff. */
    const attempt = (retriesLeft: number, serverErrors: number): Promise<Answer> => {
      const onAnswer = (answer: Answer): Answer | Promise<Answer> => {
        if (answer.ok || retriesLeft <= 0) return answer;
        const retryAfter = answer.parameters?.retry_after;
        if (typeof retryAfter === "number" && retryAfter <= maxDelaySeconds)
          return pauseCall(retryAfter * 1000, signal, ABORTED_BETWEEN_RETRIES).then(() =>
            attempt(retriesLeft - 1, 0),
          );
        if (answer.error_code < 500) return answer;
        const wait = backoffMs(serverErrors, FIRST_BACKOFF_MS, MAX_BACKOFF_MS);
        return pauseCall(wait, signal, ABORTED_BETWEEN_RETRIES).then(() =>
          attempt(retriesLeft - 1, serverErrors + 1),
        );
      };
      return send().then(onAnswer, (failure: unknown) =>
        retryNetwork(failure, send, method, signal, network).then(onAnswer),
      );
    };
    return attempt(maxRetryAttempts, 0);
  };
}
