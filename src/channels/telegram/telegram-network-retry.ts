/**
 * Bounded retries of Bot API calls that failed in the network — grammY's HttpError: no answer came
 * back (a reset connection, a keep-alive socket closed as it was reused, a call past its deadline:
 * telegram-deadlines.ts). Without them one dropped connection loses a turn's final answer: the
 * history holds it, the person never sees it. A few attempts with growing waits, then the error
 * goes on as before. Telegram's own answers (GrammyError: 4xx, 429, 5xx) are not retried here —
 * telegram-answer-retry.ts handles 429 and 5xx, and runs these retries inside each of its attempts
 * — and getUpdates is not either: the polling loop retries it itself, visibly. A call whose answer
 * was lost after Telegram carried it out is sent twice; that is rarer, and better, than an answer
 * lost.
 */
import { HttpError, type Transformer } from "grammy";
import pRetry from "p-retry";

/** How many times a call is tried again, and the first wait (each next one doubles). */
export interface NetworkRetryOptions {
  readonly retries: number;
  readonly firstWaitMs: number;
}

type Answer = Awaited<ReturnType<Transformer>>;

/** A few retries, the first after half a second. */
export const DEFAULT_NETWORK_RETRY: NetworkRetryOptions = Object.freeze({ retries: 3, firstWaitMs: 500 });

/**
 * The answer of `call` (a call of `method`) after its first attempt failed with `failure`: it is
 * tried again while that is a network failure, within `options`' bounds; any other failure, and
 * any of getUpdates or of an aborted call, comes back as it was.
 */
export function retryNetwork(
  failure: unknown,
  call: () => Promise<Answer>,
  method: string,
  signal: { readonly aborted: boolean } | undefined,
  options: NetworkRetryOptions,
): Promise<Answer> {
  if (method === "getUpdates") return Promise.reject(failure);
  // The retry machinery (an operation and its timers) is set up only once a call has failed:
  // its first attempt is that failure, so the waits and the count are those of every call.
  return pRetry((attempt) => (attempt === 1 ? Promise.reject(failure) : call()), {
    retries: options.retries,
    minTimeout: options.firstWaitMs,
    factor: 2,
    randomize: true,
    onFailedAttempt: (error) => {
      // Throwing here ends the retries with this error.
      if (!(error instanceof HttpError) || signal?.aborted) throw error;
    },
  });
}

/** A grammY API transformer retrying network failures of every call but getUpdates (retryNetwork). */
export function networkRetryTransformer(options: NetworkRetryOptions = DEFAULT_NETWORK_RETRY): Transformer {
  return (prev, method, payload, signal) => {
    const call = () => prev(method, payload, signal);
    return call().catch((failure: unknown) => retryNetwork(failure, call, method, signal, options));
  };
}
