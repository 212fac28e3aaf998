/**
 * A hook on the stat of opened files, for tests that change a file the moment the code under test
 * has checked it (grown or swapped after its size check). The test file mocks node:fs/promises so
 * that every handle `open` gives reports its stats through `reportStats`, then sets `after`.
 */
import type { FileHandle } from "node:fs/promises";

/** Called with the path a file was opened by, once its handle's stat has answered. */
export interface StatHook {
  after: ((opened: string) => void) | undefined;
}

/** `handle`, made to call `hook.after` with `opened` each time its stat has answered. */
export function reportStats(handle: FileHandle, opened: string, hook: StatHook): FileHandle {
  const stat = handle.stat.bind(handle);
  handle.stat = (async (...options: Parameters<typeof stat>) => {
    const stats = await stat(...options);
    hook.after?.(opened);
    return stats;
  }) as typeof handle.stat;
  return handle;
}
