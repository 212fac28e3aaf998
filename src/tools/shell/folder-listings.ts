/**
 * What a command added to the folders it downloads into. A download whose name is not on the line
 * (the server names it: `curl -OJ`, `wget --content-disposition`, `wget -i list`, aria2c,
 * `http -d`; an extraction or a clone into the command's own folder) is recorded as its folder, an
 * absolute path, which a later `bash evil.sh` run from that folder does not name. So the folders
 * are listed (their entries with their inode, size and change time) before the command runs, and
 * afterwards each entry that is new or changed is recorded too, by its real path: a later command
 * naming it, relatively or not, matches it by name (a folder entry by a path through it). Listed
 * breadth first through the folders within (not through links), as far as MAX_LISTED_ENTRIES
 * allow: an archive extracted into `.` may write into `src/lib/` that was already there, which
 * changes neither `.`'s entries nor `src`'s. Not into a `.git` folder: git rewrites it as it works
 * (a `git commit` on the line would record `index`, `HEAD`, `main`, `config`, names a later `git
 * checkout main` or `git config` spells), and it stays an entry of its parent. Bounded: a folder
 * holding more than MAX_LISTED_ENTRIES itself is not listed (a glance, not a scan), and when more
 * than MAX_ADDED_ENTRIES of the entries listed under one folder changed, none of them is recorded
 * one by one (the folder stays recorded, as before), so one command never takes more than a tenth
 * of the workspace's capped record of downloads. The caps are far past an honest download's (an
 * archive with a few top-level entries, a list of URLs) so that hiding a download among decoys
 * takes thousands of files.
 */
import type { Dirent } from "node:fs";
import { lstat, opendir } from "node:fs/promises";
import path from "node:path";

/** Entries listed per folder at most (its own, then those of the folders within, breadth first). */
const MAX_LISTED_ENTRIES = 10_000;

/**
 * The most changed entries of one folder recorded one by one: as many as one command records
 * unasked (download-execution.ts's MAX_DOWNLOADS_UNASKED), a tenth of the record's cap.
 */
const MAX_ADDED_ENTRIES = 1_000;

/** One folder's entries before a command ran: path relative to it → a signature of what it was. */
export interface FolderListing {
  /** The folder's absolute path, without a trailing `/`. */
  readonly folder: string;
  readonly entries: ReadonlyMap<string, string>;
  /** The folders (relative, "" the folder itself) whose entries were all listed. */
  readonly listed: readonly string[];
}

/** What an entry was: folder or not, its inode, size and change time (a rewrite changes one of them). */
async function signature(file: string, entry: Dirent): Promise<string | undefined> {
  try {
    const stats = await lstat(file, { bigint: true });
    return `${entry.isDirectory() ? "d" : "f"}:${stats.ino}:${stats.size}:${stats.ctimeNs}`;
  } catch {
    // Gone since it was read, or unreadable.
    return undefined;
  }
}

/**
 * `within`'s entries (relative to `root`) and their signatures; undefined when it cannot be read,
 * "too many" when it holds more than `limit` (none of them is looked at).
 */
async function entriesOf(
  root: string,
  within: string,
  limit: number,
): Promise<Map<string, string> | "too many" | undefined> {
  // Read as far as `limit` and one more: a folder of a million entries costs no more than the limit.
  const names: Dirent[] = [];
  try {
    for await (const entry of await opendir(path.join(root, within), { bufferSize: 1024 })) {
      if (names.length === limit) return "too many";
      names.push(entry);
    }
  } catch {
    return undefined;
  }
  const signed = await Promise.all(
    names.map((entry) => signature(path.join(root, within, entry.name), entry)),
  );
  const entries = new Map<string, string>();
  for (const [i, entry] of names.entries())
    if (signed[i] !== undefined) entries.set(path.join(within, entry.name), signed[i] as string);
  return entries;
}

/**
 * `folder`'s entries, then those of the folders within, breadth first, while they fit in
 * MAX_LISTED_ENTRIES; undefined when it is missing, unreadable or too large itself.
 */
async function listingOf(folder: string): Promise<FolderListing | undefined> {
  const entries = new Map<string, string>();
  const listed: string[] = [];
  const queue = [""];
  // The queue grows as it is read: the folders within are listed after the folders above them.
  for (const next of queue) {
    const found = await entriesOf(folder, next, MAX_LISTED_ENTRIES - entries.size);
    if (typeof found !== "object") {
      if (next === "") return undefined;
      continue;
    }
    listed.push(next);
    for (const [name, signed] of found) {
      entries.set(name, signed);
      if (signed.startsWith("d:") && path.basename(name) !== ".git") queue.push(name);
    }
  }
  return { folder, entries, listed };
}

/** List each of `folders` (absolute paths) as it is now; those that cannot be listed are left out. */
export async function listFolders(folders: readonly string[]): Promise<FolderListing[]> {
  const listings: FolderListing[] = [];
  for (const folder of new Set(folders.map((dir) => path.resolve(dir)))) {
    const listing = await listingOf(folder);
    if (listing !== undefined) listings.push(listing);
  }
  return listings;
}

/** The folder an entry's signature is of (`d:` and its inode), or undefined for a file. */
function folderOf(signed: string | undefined): string | undefined {
  return signed?.startsWith("d:") ? signed.slice(0, signed.indexOf(":", 2)) : undefined;
}

/**
 * The entries of the listed folders that are new or changed since they were listed, as absolute
 * paths (a folder's ending in `/`): read again in each folder listed before (a new folder is
 * itself an entry); none under a folder with more than MAX_ADDED_ENTRIES of them. A folder within
 * that was listed and read again, the same folder, is not one of them when only its times or size
 * changed (what was added to it is, by name): recorded, it would make any later path through a
 * folder of its name ask (`lib/other.py` once one file was added to `src/lib/`); nor is a `.git`
 * folder that was there before (a `git commit` on the line rewrites it, and `cat .git/config` would
 * ask).
 */
export async function addedSince(listings: readonly FolderListing[]): Promise<string[]> {
  const added: string[] = [];
  for (const { folder, entries: before, listed } of listings) {
    const changed: [name: string, signed: string][] = [];
    // The folders read again, whose own changes their entries tell.
    const reread = new Set<string>();
    let tooMany = false;
    for (const within of listed) {
      // A folder grown past what may change holds too many changes: none of its entries is looked at.
      const after = await entriesOf(folder, within, MAX_LISTED_ENTRIES + MAX_ADDED_ENTRIES);
      if (after === "too many") tooMany = true;
      if (typeof after === "object") reread.add(within);
      for (const [name, signed] of typeof after === "object" ? after : [])
        if (before.get(name) !== signed) changed.push([name, signed]);
      tooMany ||= changed.length > MAX_ADDED_ENTRIES;
      if (tooMany) break;
    }
    if (tooMany) continue;
    for (const [name, signed] of changed) {
      const now = folderOf(signed);
      // `.git`, never read into, is left the same way: git rewrites it as it works.
      const unchanged = reread.has(name) || path.basename(name) === ".git";
      if (now !== undefined && now === folderOf(before.get(name)) && unchanged) continue;
      added.push(path.join(folder, name) + (now === undefined ? "" : "/"));
    }
  }
  return added;
}
