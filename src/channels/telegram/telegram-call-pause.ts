/**
 * The wait a Bot API call makes inside the channel's transformers — for its send slot
 * (telegram-throttle.ts) or between retries of an answer (telegram-answer-retry.ts) — that ends,
 * failing the call, as soon as the call is aborted, so a stopped call never sits out its wait.
 */
import type { Transformer } from "grammy";

/** A Bot API call's abort signal, as grammY hands it to a transformer. */
export type ApiSignal = Parameters<Transformer>[3];

/** Wait `ms`, or fail with `abortMessage` when the call is aborted, before or meanwhile. */
export function pauseCall(ms: number, signal: ApiSignal | undefined, abortMessage: string): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Error(abortMessage));
    const abort = () => {
      clearTimeout(timer);
      reject(new Error(abortMessage));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", abort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", abort);
  });
}
