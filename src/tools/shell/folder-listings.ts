/**
 * What a command added to the folders it downloads into. A download whose name is not on the line
 * (the server names it: `curl -OJ`, `wget --content-disposition`, `wget -i list`, aria2c,
 * `http -d`; an extraction or a clone into the command's own folder) is recorded as its folder, an
 * absolute path, which a later `bash evil.sh` run from that folder does not name. So the folders
 * are listed (one level, names with their inode, size and change time) before the command runs,
 * and afterwards each entry that is new or changed is recorded too, by its real path: a later
 * command naming it, relatively or not, matches it by name (a folder entry by a path through it).
 * Bounded: a folder holding more than MAX_LISTED_ENTRIES is not listed (a glance, not a scan), and
 * when more than MAX_ADDED_ENTRIES entries of one folder changed, none of them is recorded one by
 * one (the folder stays recorded, as before), so one command never takes more than a tenth of the
 * workspace's capped record of downloads. The caps are far past an honest download's (an archive
 * with a few top-level entries, a list of URLs) so that hiding a download among decoys takes
 * thousands of files.
 */
import type { Dirent } from "node:fs";
import { lstat, readdir } from "node:fs/promises";
import path from "node:path";

/** Folders holding more entries than this are not listed (their downloads are the folder only). */
const MAX_LISTED_ENTRIES = 10_000;

/**
 * The most changed entries of one folder recorded one by one: as many as one command records
 * unasked (download-execution.ts's MAX_DOWNLOADS_UNASKED), a tenth of the record's cap.
 */
const MAX_ADDED_ENTRIES = 1_000;

/** One folder's entries before a command ran: name → a signature of what it was. */
export interface FolderListing {
  /** The folder's absolute path, without a trailing `/`. */
  readonly folder: string;
  readonly entries: ReadonlyMap<string, string>;
}

/** What an entry was: its inode, size and change time (a rewrite changes one of them). */
async function signature(file: string): Promise<string | undefined> {
  try {
    const stats = await lstat(file, { bigint: true });
    return `${stats.ino}:${stats.size}:${stats.ctimeNs}`;
  } catch {
    return undefined;
  }
}

/** The folder's entries and their signatures, or undefined when it is missing, unreadable or too large. */
async function entriesOf(folder: string): Promise<Map<string, string> | undefined> {
  let names: Dirent[];
  try {
    names = await readdir(folder, { withFileTypes: true });
  } catch {
    return undefined;
  }
  if (names.length > MAX_LISTED_ENTRIES) return undefined;
  const entries = new Map<string, string>();
  for (const entry of names) {
    const signed = await signature(path.join(folder, entry.name));
    if (signed !== undefined) entries.set(entry.name, `${entry.isDirectory() ? "d" : "f"}:${signed}`);
  }
  return entries;
}

/** List each of `folders` (absolute paths) as it is now; those that cannot be listed are left out. */
export async function listFolders(folders: readonly string[]): Promise<FolderListing[]> {
  const listings: FolderListing[] = [];
  for (const folder of new Set(folders.map((dir) => path.resolve(dir)))) {
    const entries = await entriesOf(folder);
    if (entries !== undefined) listings.push({ folder, entries });
  }
  return listings;
}

/**
 * The entries of the listed folders that are new or changed since they were listed, as absolute
 * paths (a folder's ending in `/`); none of a folder with more than MAX_ADDED_ENTRIES of them.
 */
export async function addedSince(listings: readonly FolderListing[]): Promise<string[]> {
  const added: string[] = [];
  for (const { folder, entries: before } of listings) {
    const after = await entriesOf(folder);
    if (after === undefined) continue;
    const changed = [...after].filter(([name, signed]) => before.get(name) !== signed);
    if (changed.length > MAX_ADDED_ENTRIES) continue;
    for (const [name, signed] of changed)
      added.push(path.join(folder, name) + (signed.startsWith("d:") ? "/" : ""));
  }
  return added;
}
