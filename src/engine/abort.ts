/** Racing work against the turn's abort signal, so an interrupt takes effect at once. */

export type Raced<T> = { readonly aborted: false; readonly value: T } | { readonly aborted: true };

/**
 * Settle with the promise's value, or `{aborted: true}` as soon as `signal` aborts. A rejection
 * of the promise after the abort is swallowed (the work was abandoned).
 */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<Raced<T>> {
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.resolve({ aborted: true });
  }
  return new Promise<Raced<T>>((resolve, reject) => {
    const onAbort = () => {
      promise.catch(() => undefined);
      resolve({ aborted: true });
    };
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve({ aborted: false, value });
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        if (signal.aborted) resolve({ aborted: true });
        else reject(error);
      },
    );
  });
}
