/** Racing work against the turn's abort signal, so an interrupt takes effect at once. */

export type Raced<T> = { readonly aborted: false; readonly value: T } | { readonly aborted: true };

const ABORTED: Raced<never> = Object.freeze({ aborted: true });

/**
 * Settle `resolve`/`reject` with the promise's outcome as a Raced value: its value, or
 * `{aborted: true}` when it rejects after `signal` aborted (the work was abandoned); a rejection
 * before the abort is passed on. The one place that knows how an outcome settles. It takes the
 * caller's own resolvers instead of returning a promise, so a caller that already builds one
 * promise per read (a model's stream of many events) makes no second one.
 */
function settleOutcome<T>(
  promise: Promise<T>,
  signal: AbortSignal,
  resolve: (raced: Raced<T>) => void,
  reject: (error: unknown) => void,
): void {
  promise.then(
    (value) => resolve({ aborted: false, value }),
    (error: unknown) => (signal.aborted ? resolve(ABORTED) : reject(error)),
  );
}

/**
 * Settle with the promise's value, or `{aborted: true}` as soon as `signal` aborts. A rejection
 * of the promise after the abort is swallowed (the work was abandoned).
 */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<Raced<T>> {
  if (signal.aborted) {
    // The work is abandoned already: its later rejection is swallowed rather than unhandled.
    promise.catch(() => undefined);
    return Promise.resolve(ABORTED);
  }
  return new Promise<Raced<T>>((resolve, reject) => {
    const onAbort = () => resolve(ABORTED);
    signal.addEventListener("abort", onAbort, { once: true });
    settleOutcome(
      promise,
      signal,
      (raced) => {
        signal.removeEventListener("abort", onAbort);
        resolve(raced);
      },
      (error) => {
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
        settleOutcome(source.next(), signal, resolve, reject);
        if (signal.aborted) resolve(ABORTED);
      });
    },
    close: () => signal.removeEventListener("abort", onAbort),
  };
}
