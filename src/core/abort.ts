/**
 * Stopping a turn and racing work against it, so an interrupt takes effect at once. A turn's
 * StopSwitch makes its AbortSignal only when something asks for one (a provider's HTTP request, a
 * tool): a turn on a model that needs none makes none, and an AbortSignal and its listeners were a
 * large part of what a short turn cost.
 */

export type Raced<T> = { readonly aborted: false; readonly value: T } | { readonly aborted: true };

const ABORTED: Raced<never> = Object.freeze({ aborted: true });

/** What a read can be stopped by: a flag to look at, and a way to be told at once. */
export interface Stoppable {
  readonly aborted: boolean;
  /** Call `listener` once when stopped (never when already stopped); returns its removal. */
  onStop(listener: () => void): () => void;
}

/** A turn's stop: a flag, its listeners, and an AbortSignal made on first use (see the header). */
export class StopSwitch implements Stoppable {
  private stopped = false;
  private controller: AbortController | undefined;
  private readonly listeners = new Set<() => void>();

  get aborted(): boolean {
    return this.stopped;
  }

  /** An AbortSignal that aborts with the switch (already aborted when made after the stop). */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.stopped) this.controller.abort();
    }
    return this.controller.signal;
  }

  /** Stop: abort the signal (if made) and tell the listeners; later calls do nothing. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.controller?.abort();
    for (const listener of this.listeners) listener();
    this.listeners.clear();
  }

  /** See `Stoppable.onStop`. */
  onStop(listener: () => void): () => void {
    if (this.stopped) return () => undefined;
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/**
 * Settle `resolve`/`reject` with the promise's outcome as a Raced value: its value, or
 * `{aborted: true}` when it rejects after `stop` aborted (the work was abandoned); a rejection
 * before the abort is passed on. The one place that knows how an outcome settles. It takes the
 * caller's own resolvers instead of returning a promise, so a caller that builds its own promise
 * (to settle on the stop as well) makes no second one.
 */
function settleOutcome<T>(
  promise: Promise<T>,
  stop: { readonly aborted: boolean },
  resolve: (raced: Raced<T>) => void,
  reject: (error: unknown) => void,
): void {
  promise.then(
    (value) => resolve({ aborted: false, value }),
    (error: unknown) => (stop.aborted ? resolve(ABORTED) : reject(error)),
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

/**
 * Read `source` to its end, handing each value to `each`, the whole read raced against `stop`:
 * settles with `{aborted: true}` as soon as the stop comes, and no value is handed on after it. One
 * race for the read rather than one per value (a model's stream of many deltas would otherwise make
 * a promise and a listener per delta). A failure of the source after the stop is swallowed.
 */
export function readAbortable<T>(
  source: AsyncIterator<T>,
  stop: Stoppable,
  each: (value: T) => void,
): Promise<Raced<void>> {
  if (stop.aborted) return Promise.resolve(ABORTED);
  return new Promise((resolve, reject) => {
    const unlisten = stop.onStop(() => resolve(ABORTED));
    settleOutcome(
      readAll(source, stop, each),
      stop,
      (raced) => {
        unlisten();
        resolve(raced);
      },
      (error) => {
        unlisten();
        reject(error);
      },
    );
  });
}

async function readAll<T>(
  source: AsyncIterator<T>,
  stop: Stoppable,
  each: (value: T) => void,
): Promise<void> {
  for (let next = await source.next(); !next.done && !stop.aborted; next = await source.next())
    each(next.value);
}
