/**
 * DownloadLog: each session's downloaded files (what its shell commands and web_fetch fetched
 * from the web; a later command that runs one asks a person: engine/permissions/
 * download-execution.ts), kept beside its record in the "sessions" space instead of inside it, so
 * saving a record never rewrites them and recording a file costs the same however many came before.
 * An append-only log of pages `dl:<session id>:<n>` (n = 0, 1, …), each claimed once with
 * setIfAbsent and never rewritten: two writers (a process past its lease and the session's next
 * holder) never overwrite each other's files, and the log has no head to keep in step. A reader
 * walks the pages from the first it lacks until one is missing. A page that does not validate is
 * reported and read on the safe side: every string it holds counts as a downloaded file.
 */
import { z } from "zod";
import { getAll, type KeyValueSpace } from "../store/store.js";
import { fromVersioned, StoredDataError, toVersioned } from "../store/versioned.js";

export const DOWNLOAD_PAGE_KIND = "downloaded-files";
/** The most files one page holds: a command that downloads more writes several pages. */
export const MAX_FILES_PER_DOWNLOAD_PAGE = 100;
/** Pages read per round trip once a session is known to have any. */
const READ_BATCH = 16;

const downloadPageSchema = z.object({ files: z.array(z.string()) });

/** Key of page `index` of a session's download log. */
export function downloadPageKey(sessionId: string, index: number): string {
  return `dl:${sessionId}:${index}`;
}

/** What a read of a session's log found from some page on. */
export interface DownloadPages {
  /** The files of the pages read, page by page (a file may come twice). */
  readonly files: readonly string[];
  /** The first page not written yet: where the next file goes. */
  readonly next: number;
  /** One line per page that did not validate (its strings are among `files` all the same). */
  readonly problems: readonly string[];
}

/** The download logs of every session in one space. */
export class DownloadLog {
  constructor(private readonly space: KeyValueSpace) {}

  /** The session's pages from `from` on; never throws for a bad page (see DownloadPages.problems). */
  async read(sessionId: string, from = 0): Promise<DownloadPages> {
    const files: string[] = [];
    const problems: string[] = [];
    let next = from;
    // Most sessions download nothing: one key tells, before pages are read a batch at a time.
    for (let batch = 1; ; batch = READ_BATCH) {
      const keys = Array.from({ length: batch }, (_, i) => downloadPageKey(sessionId, next + i));
      for (const raw of await getAll<unknown>(this.space, keys)) {
        if (raw === undefined) return { files, next, problems };
        const page = readPage(raw, `session "${sessionId}", page ${next}`);
        for (const file of page.files) files.push(file);
        if (page.problem !== undefined) problems.push(page.problem);
        next += 1;
      }
    }
  }

  /** Write `files` as the session's page `index`; false (nothing written) when that page exists already. */
  claim(sessionId: string, index: number, files: readonly string[]): Promise<boolean> {
    return this.space.setIfAbsent(
      downloadPageKey(sessionId, index),
      toVersioned(DOWNLOAD_PAGE_KIND, { files }),
    );
  }
}

/** A stored page's files; one that does not validate gives every string it holds, and says why. */
function readPage(raw: unknown, where: string): { files: readonly string[]; problem?: string } {
  try {
    return fromVersioned(raw, { kind: DOWNLOAD_PAGE_KIND, schema: downloadPageSchema, where });
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
