/**
 * What a sandboxed command may read but not change: the steering files (files/steering-files.ts)
 * — everything under `.coworker/` (the team's skills) and the workspace's AGENTS.md, at the real
 * paths the skill loader and the instructions read them from — which change only through
 * write_file, edit_file or save_skill, with a person's approval. The sandbox shows each of those
 * places read-only, and binds every folder between a root and a place a link leads to over
 * itself, still writable but immovable, so that no command can move it away and have the link
 * lead to a folder of its own (bubblewrap-backend.ts).
 *
 * A mount needs something to cover, and bwrap would make a missing one on the host and leave it
 * there. So a missing folder is made here first, empty, and stays (an empty `.coworker` holds no
 * skill), and a missing file — AGENTS.md — gets an empty placeholder for as long as commands run
 * (mount-placeholders.ts). Left alone: a place no command sees (outside the roots, or in uploads/
 * outside its conversation's folders).
 *
 * A mount cannot cover a link either: a link on the way to a steering place that a command could
 * replace gets the folder holding it locked (steering-link-locks.ts), and a command the locks
 * would need too many mounts for is refused (`SteeringMounts.refusal`).
 */
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { isWithin } from "../../core/real-paths.js";
import { type SteeringPlace, steeringPlaces } from "../files/steering-files.js";
import type { WorkspacePaths } from "../files/workspace-paths.js";
import { exists } from "../files/path-exists.js";
import { holdPlaceholder } from "./mount-placeholders.js";
import { lockFolders, lockNote, replaceableLinks } from "./steering-link-locks.js";
import type { MaskedFolder, ReadOnlyPaths } from "./sandbox-backend.js";

/** The read-only paths of one command, and the release to call once when it has ended. */
export interface SteeringMounts {
  readonly readOnly: ReadOnlyPaths;
  /** Why the command cannot run at all (locked folders with too many entries); then nothing is held. */
  readonly refusal?: string;
  /** What a failed command's result adds: which folders are locked, and why. */
  readonly note?: string;
  release(): void;
}

const NONE: SteeringMounts = Object.freeze({
  readOnly: { paths: [], pinned: [] },
  release: () => undefined,
});

/** Whether a command sees `file`: it lies in a root, and not in the part of the masked folder it hides. */
export function seen(file: string, roots: readonly string[], masked: MaskedFolder | undefined): boolean {
  if (!roots.some((root) => isWithin(file, root))) return false;
  if (masked === undefined || !isWithin(file, masked.path)) return true;
  return masked.keep.some((folder) => isWithin(file, folder));
}

/** The places that lie in no other folder place, each real path once. */
function outermost(places: readonly SteeringPlace[]): SteeringPlace[] {
  const inAnother = (place: SteeringPlace) =>
    places.some((other) => other.folder && other.real !== place.real && isWithin(place.real, other.real));
  return [
    ...new Map(places.filter((place) => !inAnother(place)).map((place) => [place.real, place])).values(),
  ];
}

/** The folders between the root `file` lies in and `file`, shallowest first. */
export function foldersAbove(file: string, roots: readonly string[]): string[] {
  const root = roots.find((dir) => isWithin(file, dir));
  const folders: string[] = [];
  let dir = path.dirname(file);
  while (root !== undefined && dir !== root && isWithin(dir, root)) {
    folders.unshift(dir);
    dir = path.dirname(dir);
  }
  return folders;
}

/** Hold a placeholder at each file (mount-placeholders.ts); all are let go again if one fails. */
function holdAll(files: readonly string[]): () => void {
  const releases: (() => void)[] = [];
  const releaseAll = () => {
    for (const release of releases.splice(0)) release();
  };
  try {
    for (const file of files) releases.push(holdPlaceholder(file));
  } catch (error) {
    releaseAll();
    throw error;
  }
  return releaseAll;
}

/**
 * The steering places a command in the workspace of `paths` must see read-only, given the uploads
 * folder masked for it, with the missing ones made on the host (module comment); nothing when the
 * workspace is missing (no command starts there).
 */
export async function steeringMounts(
  paths: WorkspacePaths,
  masked: MaskedFolder | undefined,
): Promise<SteeringMounts> {
  const roots = await paths.realRoots();
  const [workspace] = roots;
  if (workspace === undefined || !(await exists(workspace))) return NONE;
  const all = await steeringPlaces(workspace);
  const places = outermost(all.filter((place) => seen(place.real, roots, masked)));
  for (const place of places) {
    if (!(await exists(place.real)))
      await mkdir(place.folder ? place.real : path.dirname(place.real), { recursive: true });
  }
  const pinned = new Set(
    places
      .flatMap((place) => foldersAbove(place.real, roots))
      .filter((folder) => seen(folder, roots, masked)),
  );
  const links = await replaceableLinks(workspace, all, places, (file) => seen(file, roots, masked));
  const lock = links.length === 0 ? undefined : await lockFolders(links, workspace);
  if (lock !== undefined && "refusal" in lock) return { ...NONE, refusal: lock.refusal };
  const release = holdAll(places.filter((place) => !place.folder).map((place) => place.real));
  return {
    readOnly: {
      paths: places.map((place) => place.real),
      pinned: [...pinned].sort((a, b) => a.split(path.sep).length - b.split(path.sep).length),
      ...(lock === undefined ? {} : { locked: lock.locked }),
    },
    ...(lock === undefined
      ? {}
      : {
          note: lockNote(
            links,
            lock.locked.map((folder) => folder.path),
            workspace,
          ),
        }),
    release,
  };
}
