/**
 * loadOnFirstUse: a value made by an async loader the first time it is asked for, then shared.
 * The composition root builds clients on heavy SDKs (the `openai` package) this way, importing
 * them with `import()`, so start-up does not load what only a turn needs. A failed load is
 * forgotten, so the next use tries again.
 */

/** A getter that runs `load` once, on its first call, and hands every caller the same promise. */
export function loadOnFirstUse<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
}
