/**
 * The links a sandboxed command could replace to reach the steering files, and the folders locked
 * for them. A mount cannot cover a link: where `.coworker` or AGENTS.md at the workspace root is
 * one (`AGENTS.md -> CLAUDE.md`), or another link on the way to a steering place lies in a folder
 * a command may write (`docs/AGENTS.md -> ../CLAUDE.md` behind `AGENTS.md -> docs/AGENTS.md`), a
 * command could remove that link and put a folder or file of its own in its place. So each folder
 * holding such a link is locked: shown read-only — removing, renaming or creating an entry needs a
 * writable folder — with each of its files and folders (links aside) bound back over itself,
 * writable, so that work inside them, and writing a file in place, goes on. Nothing can be
 * created, renamed or removed directly in a locked folder then, and a failed command's result says
 * why (`lockNote`, steering-mounts.ts's `SteeringMounts.note`); `coworker doctor` warns about such
 * links (`linkLockWarning`). A link inside a read-only place needs no lock, nor one a command
 * cannot see. An entry made on the host after the listing here stays read-only for that command;
 * one gone meanwhile is skipped (bwrap's `--bind-try`). Each entry costs a mount, so with more
 * than MAX_LOCKED_ENTRIES of them in all (or paths too long for one command line) commands are
 * refused, saying why, rather than leave a link open. Without such links, the folders stay simply
 * writable.
 */
import { lstat, readdir, readlink, realpath } from "node:fs/promises";
import path from "node:path";
import { isWithin } from "../../core/real-paths.js";
import { type SteeringPlace, steeringPlaces } from "../files/steering-files.js";
import type { LockedFolder } from "./sandbox-backend.js";

/** The most entries of locked folders bound back one by one, in all (bwrap takes about 1 s for 1000). */
export const MAX_LOCKED_ENTRIES = 1000;
/** The most characters of their paths together: each is given twice on bwrap's command line. */
const MAX_LOCKED_PATH_CHARS = 256 * 1024;

/** A link met on the way to a steering place, and the real folder that holds it. */
interface LinkOnTheWay {
  readonly link: string;
  readonly folder: string;
}

/** Links followed at most while resolving one path, as the kernel's limit. */
const MAX_LINK_HOPS = 40;

/** What one look at a path found: nothing there, a file or folder, or a link (its target if readable). */
type Looked =
  | { readonly kind: "missing" }
  | { readonly kind: "other" }
  | { readonly kind: "link"; readonly target?: string };

/** Looks already made during one `replaceableLinks`, by path, so that shared prefixes are looked at once. */
type Looks = Map<string, Promise<Looked>>;

function look(file: string, looks: Looks): Promise<Looked> {
  let found = looks.get(file);
  if (found === undefined) {
    found = (async (): Promise<Looked> => {
      const info = await lstat(file).catch(() => undefined);
      if (info === undefined) return { kind: "missing" };
      if (!info.isSymbolicLink()) return { kind: "other" };
      const target = await readlink(file).catch(() => undefined);
      return target === undefined ? { kind: "link" } : { kind: "link", target };
    })();
    looks.set(file, found);
  }
  return found;
}

/**
 * The links met while resolving `file` (an absolute path) as the kernel does, each with the real
 * folder holding it; the walk stops at a missing name (nothing below it is a link yet). It starts
 * at `from` when `file` lies in it — `from` must be a real path, with no link on the way to it —
 * else at the file system's root.
 */
async function linksOnTheWay(file: string, from: string, looks: Looks): Promise<LinkOnTheWay[]> {
  const found: LinkOnTheWay[] = [];
  const inside = isWithin(file, from);
  let done = inside ? from : path.parse(file).root;
  let rest = (inside ? path.relative(from, file) : file).split(path.sep).filter((name) => name !== "");
  while (rest.length > 0 && found.length <= MAX_LINK_HOPS) {
    const [name = "", ...tail] = rest;
    rest = tail;
    if (name === ".") continue;
    if (name === "..") {
      done = path.dirname(done);
      continue;
    }
    const next = path.join(done, name);
    const info = await look(next, looks);
    if (info.kind === "missing") break;
    if (info.kind === "other") {
      done = next;
      continue;
    }
    found.push({ link: next, folder: done });
    const { target } = info;
    if (target === undefined) break;
    rest = [...target.split(path.sep).filter((part) => part !== ""), ...rest];
    if (path.isAbsolute(target)) done = path.parse(target).root;
  }
  return found;
}

/**
 * The links on the way to the steering places `all` (every one, as spelled in `workspace`) that a
 * command could replace: in a folder it sees and none of the read-only places `readOnly` covers.
 * Each once, by path. `workspace` must be a real path.
 */
export async function replaceableLinks(
  workspace: string,
  all: readonly SteeringPlace[],
  readOnly: readonly SteeringPlace[],
  seenByCommand: (file: string) => boolean,
): Promise<LinkOnTheWay[]> {
  const looks: Looks = new Map();
  const walks = await Promise.all(
    all.map((place) => linksOnTheWay(path.join(workspace, ...place.spelling.split("/")), workspace, looks)),
  );
  const links = walks
    .flat()
    .filter(({ folder }) => seenByCommand(folder))
    .filter(({ folder }) => !readOnly.some((place) => place.folder && isWithin(folder, place.real)));
  return [...new Map(links.map((link) => [link.link, link])).values()].sort((a, b) =>
    a.link.localeCompare(b.link),
  );
}

/** A path as the messages name it: relative in the workspace ("docs/AGENTS.md"), else absolute. */
function shown(file: string, workspace: string): string {
  return isWithin(file, workspace) ? path.relative(workspace, file) : file;
}

/** "the workspace root is" / "the workspace root and docs/ are" — the locked folders. */
function foldersPhrase(folders: readonly string[], workspace: string): string {
  const names = folders.map((folder) =>
    folder === workspace ? "the workspace root" : `${shown(folder, workspace)}/`,
  );
  return `${names.join(" and ")} ${names.length === 1 ? "is" : "are"}`;
}

/** "AGENTS.md, a link" / ".coworker and AGENTS.md, links" — the links that lock them. */
function linksPhrase(links: readonly LinkOnTheWay[], workspace: string): string {
  const names = links.map(({ link }) => shown(link, workspace));
  return `${names.join(" and ")}, ${names.length === 1 ? "a link" : "links"}`;
}

/** How a person lifts the lock. */
function liftPhrase(links: readonly LinkOnTheWay[]): string {
  return `make ${links.length === 1 ? "the link" : "each link"} the real file or folder it leads to, to lift this`;
}

/** What a failed command's result says when folders were locked for it. */
export function lockNote(
  links: readonly LinkOnTheWay[],
  folders: readonly string[],
  workspace: string,
): string {
  return (
    `[${foldersPhrase(folders, workspace)} read-only for commands: ${folders.length === 1 ? "it holds" : "they hold"} ` +
    `${linksPhrase(links, workspace)} on the way to a steering file (.coworker/ or AGENTS.md), which no ` +
    "command may replace. Nothing can be created, renamed or removed directly in such a folder (inside " +
    "its folders everything can, and its files can be written in place, though not replaced by a " +
    `rename as sed -i does); a person can ${liftPhrase(links)}]`
  );
}

/** The files and folders (links aside) directly in `folder`, as real paths. */
async function entriesOf(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isDirectory() || entry.isFile())
    .map((entry) => path.join(folder, entry.name))
    .sort();
}

/** The folders holding `links`, each once, shallowest first. */
function foldersOf(links: readonly LinkOnTheWay[]): string[] {
  const depth = (folder: string) => folder.split(path.sep).length;
  return [...new Set(links.map(({ folder }) => folder))].sort(
    (a, b) => depth(a) - depth(b) || a.localeCompare(b),
  );
}

/** The folders to lock for `links`, shallowest first, or why commands cannot run (module comment). */
export async function lockFolders(
  links: readonly LinkOnTheWay[],
  workspace: string,
): Promise<{ locked: LockedFolder[] } | { refusal: string }> {
  const folders = foldersOf(links);
  const locked = await Promise.all(
    folders.map(async (folder) => ({ path: folder, entries: await entriesOf(folder) })),
  );
  const entries = locked.flatMap((folder) => folder.entries);
  const chars = entries.reduce((sum, entry) => sum + entry.length, 0);
  if (entries.length <= MAX_LOCKED_ENTRIES && chars <= MAX_LOCKED_PATH_CHARS) return { locked };
  return {
    refusal:
      `commands cannot run in this workspace: ${foldersPhrase(folders, workspace)} to be kept read-only ` +
      `for commands, for ${linksPhrase(links, workspace)} on the way to a steering file (.coworker/ or ` +
      `AGENTS.md), with each of ${entries.length} entries bound back one by one, and at most ` +
      `${MAX_LOCKED_ENTRIES} can be (with paths of at most ${MAX_LOCKED_PATH_CHARS} characters together). ` +
      `A person can make ${links.length === 1 ? "the link" : "each link"} the real file or folder it leads to, or move entries into a folder.`,
  };
}

/**
 * Doctor's warning (cli/doctor-shell-check.ts) when links on the way to the steering files of the
 * workspace `root` make folders read-only for commands; undefined when none does.
 */
export async function linkLockWarning(root: string): Promise<{ summary: string; fix: string } | undefined> {
  const workspace = await realpath(root).catch(() => undefined);
  if (workspace === undefined) return undefined;
  const all = await steeringPlaces(workspace);
  // A command with the workspace as its one root and no folder masked sees what lies in it, and
  // every steering place there is read-only (a place inside another covers nothing more).
  const seenByCommand = (file: string) => isWithin(file, workspace);
  const readOnly = all.filter((place) => seenByCommand(place.real));
  const links = await replaceableLinks(workspace, all, readOnly, seenByCommand);
  if (links.length === 0) return undefined;
  const folders = foldersOf(links);
  const them = folders.length === 1 ? "it" : "them";
  return {
    summary:
      `${linksPhrase(links, workspace)} on the way to a steering file (.coworker/ or AGENTS.md), make ` +
      `${foldersPhrase(folders, workspace).replace(/ (is|are)$/, "")} read-only for commands (nothing can ` +
      `be created, renamed or removed directly in ${them})`,
    fix: liftPhrase(links),
  };
}
