/**
 * The write paths of ChannelBuffer that another process may race: committing a head only over
 * the head it was read from (compare-and-set; shared mode, several processes on one store),
 * dropping a buffer by deleting only the head it read (compare-and-delete) and then that head's
 * pages (in both modes: a single process drops through it too), and starting an attempt again
 * when another process moved the head on meanwhile. Kept apart from ChannelBuffer because
 * it is the one place where writes can lose to another process's, and where the pages a lost or
 * failed write made must be cleaned up.
 */
import { backoffMs } from "../core/backoff.js";
import type { KeyValueSpace } from "../store/store.js";
import { bufferHeadKey, deletePages, listedPages, type PageKey } from "./channel-buffer-store-shapes.js";

/** How many times a shared write or read starts again after other processes moved the head meanwhile. */
const MAX_ATTEMPTS = 16;
/** The pause before the first new attempt, doubled before each next one up to the longest. */
const FIRST_PAUSE_MS = 5;
const LONGEST_PAUSE_MS = 200;

/** A page the head lists is gone: another process moved the head on meanwhile (shared buffers only). */
export class PageGone extends Error {}

/**
 * Run `attempt` again from the stored head while other processes' writes get in its way (it
 * returns null, or a page its head lists is gone): at most MAX_ATTEMPTS times, then fail.
 * `forget` drops the caller's cached copy of the channel before each new attempt, and `pause`
 * waits before it (the caller's clock): a doubling backoff, each pause between half and all of
 * it at random, so processes that keep colliding spread out instead of colliding again at once.
 */
export async function retrying<T>(
  channelKey: string,
  what: string,
  attempt: () => Promise<T | null>,
  forget: () => void,
  pause: (ms: number) => Promise<void>,
): Promise<T> {
  for (let attempts = 1; ; attempts++) {
    try {
      const result = await attempt();
      if (result !== null) return result;
    } catch (error) {
      if (!(error instanceof PageGone)) throw error;
    }
    forget();
    if (attempts === MAX_ATTEMPTS)
      throw new Error(
        `channel buffer: ${what} of ${channelKey} failed: other processes changed its buffer ${attempts} times meanwhile`,
      );
    const backoff = backoffMs(attempts - 1, FIRST_PAUSE_MS, LONGEST_PAUSE_MS);
    await pause(backoff / 2 + (Math.random() * backoff) / 2);
  }
}

/**
 * Delete the stored head only while it is the head read (compare-and-delete; null when another
 * process moved it meanwhile), then the pages of exactly that head, so no head or page of the
 * dropped buffer is left stored. A write another process commits before the delete moves the
 * head, so the delete misses and the next attempt drops that write too, as one that came before
 * the drop; one committed after it starts a new buffer, which the drop leaves alone.
 */
export async function dropOnce(space: KeyValueSpace, channelKey: string): Promise<true | null> {
  const headKey = bufferHeadKey(channelKey);
  const raw = await space.get(headKey);
  if (raw === undefined) return true;
  if (!(await space.deleteIf(headKey, raw))) return null;
  await deletePages(space, channelKey, listedPages(channelKey, raw));
  return true;
}

/**
 * Write the head over `previous` (the head as stored when read; where none is, when null);
 * false when another process wrote it first. When the store fails midway the write may or may not
 * have landed: if the stored head lists page write `rev` it did, else this write's pages `ours`
 * are deleted (nothing lists them) before the failure is passed on.
 */
export async function commitShared(
  space: KeyValueSpace,
  channelKey: string,
  previous: { readonly stored: unknown } | null,
  stored: unknown,
  rev: string | undefined,
  ours: readonly PageKey[],
): Promise<boolean> {
  const headKey = bufferHeadKey(channelKey);
  try {
    return previous
      ? await space.replaceIf(headKey, previous.stored, stored)
      : await space.setIfAbsent(headKey, stored);
  } catch (error) {
    let now: unknown;
    try {
      now = await space.get(headKey);
    } catch {
      throw error; // still failing: whether the write landed is unknown, so its pages stay
    }
    if (listedPages(channelKey, now).some((p) => p.rev === rev)) return true;
    await deletePages(space, channelKey, ours).catch(() => undefined);
    throw error;
  }
}
