/** Racing work against the turn's abort signal, so an interrupt takes effect at once. */

export type Raced<T> = { readonly aborted: false; readonly value: T } | { readonly aborted: true };

const ABORTED: Raced<never> = Object.freeze({ aborted: true });

/**
 * The promise's outcome as a Raced value: its value, or `{aborted: true}` when it rejects after
 * `signal` aborted (the work was abandoned); a rejection before the abort is passed on.
 */
function outcomeOf<T>(promise: Promise<T>, signal: AbortSignal): Promise<Raced<T>> {
  return promise.then(
    (value): Raced<T> => ({ aborted: false, value }),
    (error: unknown) => {
      if (signal.aborted) return ABORTED;
      throw error;
    },
  );
}

/**
 * Settle with the promise's value, or `{aborted: true}` as soon as `signal` aborts. A rejection
 * of the promise after the abort is swallowed (the work was abandoned).
 */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<Raced<T>> {
  const outcome = outcomeOf(promise, signal);
  if (signal.aborted) return Promise.resolve(ABORTED);
  return new Promise<Raced<T>>((resolve, reject) => {
    const onAbort = () => resolve(ABORTED);
    signal.addEventListener("abort", onAbort, { once: true });
    outcome.then(
      (raced) => {
        signal.removeEventListener("abort", onAbort);
        resolve(raced);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
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
  const onAbort = () => wake?.(ABORTED);
  signal.addEventListener("abort", onAbort, { once: true });
  return {
    next() {
      return new Promise((resolve, reject) => {
        wake = resolve;
        source.next().then(
          (value) => resolve({ aborted: false, value }),
          (error: unknown) => (signal.aborted ? resolve(ABORTED) : reject(error)),
        );
        if (signal.aborted) resolve(ABORTED);
      });
    },
    close: () => signal.removeEventListener("abort", onAbort),
  };
}
