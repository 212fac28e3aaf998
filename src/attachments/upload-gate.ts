/**
 * The disk budget for files people send, shared by every channel: each channel asks before it
 * downloads a file, and a file refused here is not downloaded — the channel turns the reason into
 * the same note it gives an oversized file (the model sees it with the message, and the person is
 * told), never a silent loss.
 *
 * Two limits:
 * - Per person, the bytes saved in a rolling day (`attachments.daily_upload_bytes_per_person`),
 *   counted in the store (store/byte-budget.ts, under `uploads:<platform>:<user>`), so every
 *   process on it and every restart share one count. A file's size as the platform states it is
 *   claimed before the download (the channel's per-file maximum when it states none) and settled
 *   to the bytes really saved after; a file that saved nothing gives its claim back.
 * - For everyone, a floor of free space on the filesystem holding the workspace
 *   (`attachments.min_free_disk_bytes`): no file is downloaded while the free space, less the
 *   file, would fall under it. Free space is read at most every few seconds (statfs); taken off
 *   it are the files still downloading (their held size: what they have written so far is counted
 *   twice, on the safe side) and the bytes saved since the reading.
 * A limit that cannot be checked (the store or statfs failing) refuses, and says so.
 * Deleting old uploads is not this module's job: nothing here frees what was saved.
 */
import { statfs } from "node:fs/promises";
import type { Logger } from "pino";
import { qualifiedUserId } from "../approvals/authorisation.js";
import { formatBytes } from "../core/attachment.js";
import type { ByteBudget } from "../store/byte-budget.js";

/** A file let through: `settle` records the bytes really saved, `release` that none were. Neither rejects. */
export interface UploadHold {
  settle(bytes: number): Promise<void>;
  release(): Promise<void>;
}

/** What `admit` answered: go ahead, or why not (a clause for the file's note). */
export type UploadAdmission =
  | ({ readonly ok: true } & UploadHold)
  | { readonly ok: false; readonly reason: string };

export interface UploadGate {
  /**
   * May `userId` on `platform` have a file of `declaredBytes` saved (undefined: the platform
   * states no size, so `maxBytes`, the channel's per-file cap, is held until it is settled)?
   */
  admit(
    platform: string,
    userId: string,
    declaredBytes: number | undefined,
    maxBytes: number,
  ): Promise<UploadAdmission>;
}

/** The free bytes (for unprivileged users) of the filesystem holding `path`. */
export async function statfsFreeBytes(path: string): Promise<number> {
  const stats = await statfs(path);
  return stats.bavail * stats.bsize;
}

/** How long one reading of the free space stands, by default. */
export const FREE_SPACE_CHECK_MS = 5_000;

export interface UploadGateOptions {
  /** Where the bytes per person are counted (the app: over the store's 'budgets' space). */
  readonly budget: ByteBudget;
  /** Bytes one person's saved files may total in the budget's window (a rolling day). */
  readonly bytesPerPerson: number;
  /** A path on the filesystem files are saved to (the workspace root). */
  readonly workspaceRoot: string;
  /** No file is downloaded while the free space, less the file, would be under this (0: not read at all). */
  readonly minFreeBytes: number;
  /** Reads the free bytes of the filesystem holding a path (default statfsFreeBytes). */
  readonly freeBytes?: (path: string) => Promise<number>;
  /** How long one reading of the free space stands, in ms (default FREE_SPACE_CHECK_MS). */
  readonly freeSpaceCheckMs?: number;
  /** The clock of the free-space readings and the "room again" times (default Date.now). */
  readonly now?: () => number;
  readonly logger: Logger;
}

/** "about 3 hours", "about 20 minutes": `ms` rounded up to minutes or hours. */
function inAbout(ms: number): string {
  const minutes = Math.max(1, Math.ceil(ms / 60_000));
  if (minutes < 60) return `about ${minutes} minute${minutes === 1 ? "" : "s"}`;
  const hours = Math.ceil(minutes / 60);
  return `about ${hours} hour${hours === 1 ? "" : "s"}`;
}

/** The gate over `options.budget` and the workspace's filesystem (see the module header). */
export function createUploadGate(options: UploadGateOptions): UploadGate {
  const { budget, bytesPerPerson, minFreeBytes, logger } = options;
  const readFree = options.freeBytes ?? statfsFreeBytes;
  const checkMs = options.freeSpaceCheckMs ?? FREE_SPACE_CHECK_MS;
  const now = options.now ?? Date.now;
  /** The last reading, and the bytes saved since it. */
  let reading: { free: number; at: number; saved: number } | undefined;
  /** The held bytes of the files admitted and still downloading (not settled or released). */
  let downloading = 0;
  let pending: Promise<void> | undefined;

  async function freshReading(): Promise<{ free: number; at: number; saved: number }> {
    if (reading && now() - reading.at < checkMs) return reading;
    // One read at a time: files arriving together share it.
    pending ??= readFree(options.workspaceRoot)
      .then((free) => {
        reading = { free, at: now(), saved: 0 };
      })
      .finally(() => {
        pending = undefined;
      });
    await pending;
    return reading!;
  }

  /** Why the disk cannot take `bytes` more now, or undefined when it can (and they are counted). */
  async function diskRefusal(bytes: number): Promise<string | undefined> {
    if (minFreeBytes === 0) return undefined;
    let current: { free: number; saved: number };
    try {
      current = await freshReading();
    } catch (error) {
      logger.warn({ err: error, path: options.workspaceRoot }, "free disk space could not be read");
      return "the server's free disk space could not be checked";
    }
    if (current.free - downloading - current.saved - bytes < minFreeBytes)
      return `the server is low on disk space (it keeps ${formatBytes(minFreeBytes)} free), so files are not being saved for now`;
    downloading += bytes;
    return undefined;
  }

  /** A file counted as downloading is done: `saved` of its `held` bytes are on disk now. */
  const doneDownloading = (held: number, saved: number) => {
    if (minFreeBytes === 0) return;
    downloading = Math.max(0, downloading - held);
    if (reading) reading.saved += saved;
  };

  return {
    async admit(platform, userId, declaredBytes, maxBytes) {
      const held = Math.max(0, Math.min(declaredBytes ?? maxBytes, maxBytes));
      const disk = await diskRefusal(held);
      if (disk !== undefined) return { ok: false, reason: disk };
      const key = `uploads:${qualifiedUserId(platform, userId)}`;
      let take: Awaited<ReturnType<ByteBudget["take"]>>;
      try {
        take = await budget.take(key, held, bytesPerPerson);
      } catch (error) {
        doneDownloading(held, 0);
        logger.warn({ err: error, key }, "upload budget could not be checked");
        return { ok: false, reason: "your upload allowance could not be checked just now" };
      }
      if (!take.ok) {
        doneDownloading(held, 0);
        const window = `the last ${inAbout(budget.windowMs).replace("about ", "")}`;
        const when =
          take.freesAt !== undefined ? `; there is room again in ${inAbout(take.freesAt - now())}` : "";
        return {
          ok: false,
          reason: take.tooMany
            ? `you have sent ${budget.maxClaims} files in ${window}, the most saved per person${when}`
            : `your files of ${window} (${formatBytes(take.used)}) and this one (${formatBytes(held)}) would pass the ${formatBytes(bytesPerPerson)} saved per person in that time${when}`,
        };
      }
      return {
        ok: true,
        settle: async (bytes) => {
          doneDownloading(held, bytes);
          // Kept as held when it cannot be written: that errs on the safe side.
          await take.settle(bytes).catch((error: unknown) => {
            logger.warn({ err: error, key }, "upload budget could not be settled");
          });
        },
        release: async () => {
          doneDownloading(held, 0);
          await take.release().catch((error: unknown) => {
            logger.warn({ err: error, key }, "upload budget claim could not be given back");
          });
        },
      };
    },
  };
}
