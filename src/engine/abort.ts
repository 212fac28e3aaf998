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

/** An iterator's results raced against an abort signal (see `abortableReader`). */
export interface AbortableReader<T> {
  /** The source's next result, or `{aborted: true}` as soon as the signal aborts. */
  next(): Promise<Raced<IteratorResult<T>>>;
  /** Stop listening to the signal (call when done reading). */
  close(): void;
}

/**
 * Read `source` racing each result against `signal`, like `raceAbort` on every `next()`, with one
 * abort listener for the whole read: a model's stream of many deltas would otherwise add and
 * remove a listener per delta. A rejection of a result after the abort is swallowed.
 */
export function abortableReader<T>(source: AsyncIterator<T>, signal: AbortSignal): AbortableReader<T> {
  let wake: ((raced: Raced<IteratorResult<T>>) => void) | undefined;
  const onAbort = () => wake?.({ aborted: true });
  signal.addEventListener("abort", onAbort, { once: true });
  return {
    next() {
      const pending = source.next();
      if (signal.aborted) {
        pending.catch(() => undefined);
        return Promise.resolve({ aborted: true });
      }
      return new Promise((resolve, reject) => {
        wake = resolve;
        pending.then(
          (value) => resolve({ aborted: false, value }),
          (error: unknown) => (signal.aborted ? resolve({ aborted: true }) : reject(error)),
        );
      });
    },
    close: () => signal.removeEventListener("abort", onAbort),
  };
}
