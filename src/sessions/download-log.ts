/**
 * DownloadLog: downloaded files (what shell commands and web_fetch fetched from the web; a later
 * command that runs one asks a person: engine/permissions/download-execution.ts), each log under
 * its id in the "sessions" space, apart from the session records, so saving a record never
 * rewrites them and recording a file costs the same however many came before. The service keeps
 * one log per workspace (workspace-downloads.ts: the files lie in the workspace, which every
 * session on it shares); builds before that kept one per session, under the session's id, and
 * those are still read when their session loads — until they are folded into the workspace's: a
 * mark `dlfolded:<id>` (written once every file is stored in the workspace's log, and read in the
 * round trip that tells a log is empty) names the log they went to and the first page the fold did
 * not find, and such a log is read again for it only from that page on, when it exists: the old
 * log itself is kept, and a build before the move (still running in a rolling deploy) both reads
 * it and appends to it.
 * An append-only log of pages `dl:<log id>:<n>` (n = 0, 1, …), each claimed once with
 * setIfAbsent and never rewritten: two writers (processes, or a process past its lease and the
 * session's next holder) never overwrite each other's files, and appending keeps no head in step.
 * So that a load does not read every page a long-lived log ever got, a writer compacts the
 * log: a snapshot `dlsnap:<id>:<k>` (claimed once) holds every file of the pages before k, and
 * `dlhead:<id>` names the latest one. A reader takes the snapshot the head names and the pages from
 * k on, so a file a writer appends while another snapshots (on a page ≥ k) is still read; a reader
 * that has read the log already reads the pages after those it read, without the head. The head
 * is only where reading may start: the last writer's is kept, and one set back to an older
 * snapshot costs reads, never files. Pages are never removed (only a replaced snapshot is), and no
 * entry expires: a head naming a snapshot removed since is read from page 0, and so is a log
 * without a head (one written before snapshots, which such a build still reads whole). A page or
 * snapshot that does not validate is reported and read on the safe side: every string it holds
 * counts as a downloaded file; a head that does not validate is reported and every page is read.
 * A log does not grow without end: its writer (downloaded-files.ts) stops at a cap of files and
 * appends the full mark (engine/permissions/download-execution.ts's DOWNLOAD_RECORD_FULL) as a
 * page's only entry, a string read like any file, so a snapshot keeps it too and every reader (each
 * process, after a restart) finds it; nothing is appended after it. (A build before the cap reads
 * the mark as a file name no command can spell: it neither heeds it nor stops at the cap.) Only an
 * operator removes a log's keys (README.md, "downloaded code"): the mark is never removed here.
 * Keys. Each key names its log by its id — `dl:<id>:<n>`, `dlsnap:<id>:<k>`, `dlhead:<id>`,
 * `dlfolded:<id>` — unless the store would refuse that key (checkKey, store/keyv-space.ts: longer
 * than MAX_KEY_LENGTH, 200 characters on every backend, or holding a lone surrogate): then it names
 * the log by the SHA-256 of its id (UTF-8, 64 hex digits) after its kind and a `#`, `dl#<hex>:<n>`,
 * `dlsnap#<hex>:<k>`, `dlhead#<hex>`, `dlfolded#<hex>` (under 100 characters). A workspace's id
 * holds its root (workspace-downloads.ts), so a root of some 180 characters or more has such keys
 * (builds before named logs by id only: from 191 characters every read of the record threw, and
 * no session on the workspace could load; from 188 its snapshots failed). The choice is made key by
 * key, so every key the store took before is the same key now (a record stored by an earlier build
 * reads as it is), and a log whose id is near the limit may have plain keys for its early pages and
 * digest keys for its later ones (`dl:<id>:9`, then `dl#<hex>:10`). A `#` right after the kind is
 * where a plain key has its `:`, so no digest key is ever a plain one, whatever the ids.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { checkKey } from "../store/keyv-space.js";
import { getAll, type KeyValueSpace } from "../store/store.js";
import { fromVersioned, StoredDataError, toVersioned } from "../store/versioned.js";

export const DOWNLOAD_PAGE_KIND = "downloaded-files";
const SNAPSHOT_KIND = "downloaded-files-snapshot";
const HEAD_KIND = "downloaded-files-head";
const FOLDED_KIND = "downloaded-files-folded";
/** The most files one page holds: a command that downloads more writes several pages. */
export const MAX_FILES_PER_DOWNLOAD_PAGE = 100;
/** Pages read per round trip once a log is known to have any. */
const READ_BATCH = 16;
/**
 * Pages past the latest snapshot at which a writer writes a new one: so fewer than a read batch
 * follow it, and a load reads the head, then the snapshot with the pages after it: two round trips.
 */
export const DOWNLOAD_PAGES_PER_SNAPSHOT = READ_BATCH;

const filesSchema = z.object({ files: z.array(z.string()) });
const headSchema = z.object({ snapshot: z.number().int().positive() });
const foldedSchema = z.object({ into: z.string(), next: z.number().int().nonnegative() });

/** Key of page `index` of a download log. */
export function downloadPageKey(logId: string, index: number): string {
  return logKey("dl", logId, `:${index}`);
}

/** Key of the snapshot holding every file of a log's pages before `upTo`. */
export function downloadSnapshotKey(logId: string, upTo: number): string {
  return logKey("dlsnap", logId, `:${upTo}`);
}

/** Key naming a log's latest snapshot. */
export function downloadHeadKey(logId: string): string {
  return logKey("dlhead", logId, "");
}

/** Key of the mark saying every file of a log's pages before one is stored in another (the one it names). */
export function downloadFoldedKey(logId: string): string {
  return logKey("dlfolded", logId, "");
}

/**
 * The key of kind `kind` of the log `logId`, `tail` after it: `<kind>:<logId><tail>` when the store
 * takes it, else `<kind>#<SHA-256 of logId><tail>` (see the module comment).
 */
function logKey(kind: string, logId: string, tail: string): string {
  const plain = `${kind}:${logId}${tail}`;
  if (storable(plain)) return plain;
  return `${kind}#${createHash("sha256").update(logId, "utf8").digest("hex")}${tail}`;
}

/** Whether the store takes `key`: checkKey, which every store call runs, does not refuse it. */
function storable(key: string): boolean {
  try {
    checkKey("sessions", key);
    return true;
  } catch {
    return false;
  }
}

/** What a read of a log found from some page on. */
export interface DownloadPages {
  /** The files of the snapshot and pages read (a file may come twice). */
  readonly files: readonly string[];
  /** The first page not written yet: where the next file goes. */
  readonly next: number;
  /** The snapshot read (it held every file of the pages before this one); 0 when none was. */
  readonly snapshot: number;
  /** One line per page, snapshot or head that did not validate (a page's strings are among `files` all the same). */
  readonly problems: readonly string[];
}

/** The download logs in one space, each under its log id. */
export class DownloadLog {
  constructor(private readonly space: KeyValueSpace) {}

  /**
   * Every file of the log (from the snapshot the head names, and the pages after it); never
   * throws for a bad page (see DownloadPages.problems).
   */
  async read(logId: string): Promise<DownloadPages> {
    // Most logs are empty: one round trip tells, before pages are read a batch at a time.
    const [rawHead, first] = await getAll<unknown>(this.space, [
      downloadHeadKey(logId),
      downloadPageKey(logId, 0),
    ]);
    return this.readFromHead(logId, rawHead, first, { files: [], problems: [] });
  }

  /**
   * The files of the log's pages from `from` on, without its head: for a reader that read the
   * pages before (a snapshot would hold those again); never throws for a bad page.
   */
  async readFrom(logId: string, from: number): Promise<DownloadPages> {
    const found: Found = { files: [], problems: [] };
    const next = await this.walk(
      logId,
      from,
      await getAll<unknown>(this.space, [downloadPageKey(logId, from)]),
      found,
    );
    return { ...found, snapshot: 0, next };
  }

  /**
   * Every file of the log, as `read` gives them — or, when it is marked folded into the log `into`
   * (`markFolded`), the pages from the first one the fold did not find, undefined when there are
   * none: the mark is read in the round trip that tells the log is empty. A mark that does not
   * validate is reported, and the log read whole.
   */
  async readUnlessFolded(logId: string, into: string): Promise<DownloadPages | undefined> {
    const [rawFolded, rawHead, first] = await getAll<unknown>(this.space, [
      downloadFoldedKey(logId),
      downloadHeadKey(logId),
      downloadPageKey(logId, 0),
    ]);
    const found: Found = { files: [], problems: [] };
    const folded = this.foldedOf(rawFolded, logId, found);
    if (folded?.into !== into) return this.readFromHead(logId, rawHead, first, found);
    // Pages appended since the fold (by a build before the move) are read, and folded in turn.
    const since = await this.readFrom(logId, folded.next);
    return since.next === folded.next ? undefined : since;
  }

  /**
   * Mark the log as folded into the log `into` up to page `next` (as a read of it gave it): call it
   * only once every file of the pages before it is stored there.
   */
  markFolded(logId: string, into: string, next: number): Promise<void> {
    return this.space.set(downloadFoldedKey(logId), toVersioned(FOLDED_KIND, { into, next }));
  }

  /** The log's files from the snapshot its head names (`rawHead`), else from page 0 (`first`, read already). */
  private async readFromHead(
    logId: string,
    rawHead: unknown,
    first: unknown,
    found: Found,
  ): Promise<DownloadPages> {
    const snapshot = this.headOf(rawHead, logId, found);
    if (snapshot > 0) {
      const [rawSnapshot, ...pages] = await getAll<unknown>(this.space, [
        downloadSnapshotKey(logId, snapshot),
        ...pageKeys(logId, snapshot, READ_BATCH),
      ]);
      if (rawSnapshot !== undefined) {
        take(found, readFiles(rawSnapshot, SNAPSHOT_KIND, `downloads log "${logId}", snapshot ${snapshot}`));
        return { ...found, snapshot, next: await this.walk(logId, snapshot, pages, found) };
      }
      // A newer snapshot replaced it after the head was read, or a writer set the head back to
      // one already replaced: the pages are all still there.
    }
    return { ...found, snapshot: 0, next: await this.walk(logId, 0, [first], found) };
  }

  /** Write `files` as the log's page `index`; false (nothing written) when that page exists already. */
  claim(logId: string, index: number, files: readonly string[]): Promise<boolean> {
    return this.space.setIfAbsent(downloadPageKey(logId, index), toVersioned(DOWNLOAD_PAGE_KIND, { files }));
  }

  /**
   * Make `files` (every file of the log's pages before `upTo`, at least) its snapshot, readers'
   * new start, and remove the snapshot `replaced` (0: none). The snapshot is stored before the head
   * names it; when another writer claimed one at `upTo` first, that one (as complete) is named.
   */
  async snapshot(logId: string, upTo: number, files: readonly string[], replaced: number): Promise<void> {
    await this.space.setIfAbsent(downloadSnapshotKey(logId, upTo), toVersioned(SNAPSHOT_KIND, { files }));
    await this.space.set(downloadHeadKey(logId), toVersioned(HEAD_KIND, { snapshot: upTo }));
    if (replaced > 0 && replaced !== upTo) await this.space.delete(downloadSnapshotKey(logId, replaced));
  }

  /** What a fold mark says (undefined: none, or a mark that does not validate, reported). */
  private foldedOf(raw: unknown, logId: string, found: Found): z.infer<typeof foldedSchema> | undefined {
    if (raw === undefined) return undefined;
    try {
      return fromVersioned(raw, {
        kind: FOLDED_KIND,
        schema: foldedSchema,
        where: `downloads log "${logId}"`,
      });
    } catch (error) {
      if (!(error instanceof StoredDataError)) throw error;
      found.problems.push(`${error.message}; the log is read again`);
      return undefined;
    }
  }

  /** The snapshot the head names (0: none, or a head that does not validate, reported). */
  private headOf(raw: unknown, logId: string, found: Found): number {
    if (raw === undefined) return 0;
    try {
      return fromVersioned(raw, { kind: HEAD_KIND, schema: headSchema, where: `downloads log "${logId}"` })
        .snapshot;
    } catch (error) {
      if (!(error instanceof StoredDataError)) throw error;
      found.problems.push(`${error.message}; every page is read instead`);
      return 0;
    }
  }

  /** Take in the pages from `from` on (`batch` holds the first of them, read already): the first page missing. */
  private async walk(logId: string, from: number, batch: unknown[], found: Found): Promise<number> {
    let next = from;
    for (let raws = batch; ; raws = await getAll<unknown>(this.space, pageKeys(logId, next, READ_BATCH))) {
      for (const raw of raws) {
        if (raw === undefined) return next;
        take(found, readFiles(raw, DOWNLOAD_PAGE_KIND, `downloads log "${logId}", page ${next}`));
        next += 1;
      }
    }
  }
}

/** Files and problems gathered by one read. */
interface Found {
  readonly files: string[];
  readonly problems: string[];
}

function take(found: Found, read: { files: readonly string[]; problem?: string }): void {
  for (const file of read.files) found.files.push(file);
  if (read.problem !== undefined) found.problems.push(read.problem);
}

function pageKeys(logId: string, from: number, count: number): string[] {
  return Array.from({ length: count }, (_, i) => downloadPageKey(logId, from + i));
}

/** A stored page's or snapshot's files; one that does not validate gives every string it holds, and says why. */
function readFiles(
  raw: unknown,
  kind: string,
  where: string,
): { files: readonly string[]; problem?: string } {
  try {
    return fromVersioned(raw, { kind, schema: filesSchema, where });
  } catch (error) {
    if (!(error instanceof StoredDataError)) throw error;
    const files = stringsIn(raw);
    return {
      files,
      problem: `${error.message}; its ${files.length} strings are all taken as downloaded files`,
    };
  }
}

/** Every string in a JSON value, at any depth. */
function stringsIn(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (value === null || typeof value !== "object") return [];
  return Object.values(value).flatMap(stringsIn);
}
