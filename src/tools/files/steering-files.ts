/**
 * Steering files: the workspace files whose text steers every later session — anything under
 * `.coworker/` (the team's skills, in every turn's catalog) and `AGENTS.md` at the root (in every
 * session's instructions). Writing one weighs as much as save_skill, so a write_file or edit_file
 * there asks a person in every mode, over any grant (the permission engine's `steering_file`
 * rule). The rule is applied twice:
 *  - `steeringPathOf`, lexically on the path a call proposes, for the decision before it runs:
 *    `./`, `..`, repeated separators and letter case do not hide one;
 *  - `steeringTargetOf`, on the real path the call resolved to, against the real paths the skill
 *    loader and the instructions read (a link at `.coworker`, `.coworker/skills`, a skill's folder,
 *    its SKILL.md or AGENTS.md leads them where it points), when the call runs: a steering file
 *    reached through a spelling or link the first view missed is put to the engine again.
 * web_fetch's save_to, whose approval goes by domain and never asks as a steering file does,
 * refuses every steering file (`steeringTargetOf`), and run_command's sandbox shows the places
 * they are read from read-only (`steeringPlaces`; shell/steering-mounts.ts).
 */
import { lstat, readdir } from "node:fs/promises";
import path from "node:path";
import { isMissing } from "../../core/missing-file.js";
import type { ToolContext } from "../../core/tool.js";
import {
  COWORKER_FOLDER,
  INSTRUCTIONS_FILE,
  SKILL_FILE,
  SKILLS_FOLDER,
} from "../../core/workspace-layout.js";
import { type ResolvedPath, realpathOfMaybeMissing, type WorkspacePaths } from "./workspace-paths.js";

/** A place the steering files are read from: its workspace spelling and real path. */
export interface SteeringPlace {
  /** `/`-separated, relative to the workspace root (".coworker/skills/deploy"). */
  readonly spelling: string;
  readonly real: string;
  /** A folder covers everything below it; a file only itself. */
  readonly folder: boolean;
}

/** The names `names` (a workspace-relative path split) spell as a steering file, if they do. */
function steeringSpelling(names: readonly string[]): string | undefined {
  const [first = "", ...rest] = names;
  if (first.toLowerCase() === COWORKER_FOLDER) return [COWORKER_FOLDER, ...rest].join("/");
  if (rest.length === 0 && first.toLowerCase() === INSTRUCTIONS_FILE.toLowerCase()) return INSTRUCTIONS_FILE;
  return undefined;
}

/**
 * The steering file `input` names lexically — relative to `root`, or absolute inside it — as its
 * workspace spelling (".coworker/skills/x/SKILL.md", "AGENTS.md"); undefined when it names none.
 * Without a root, an absolute path names none here (the run-time check still sees it).
 */
export function steeringPathOf(input: string, root: string | undefined): string | undefined {
  if (root === undefined && path.isAbsolute(input)) return undefined;
  const base = path.resolve(root ?? path.sep);
  const relative = path.relative(base, path.resolve(base, input));
  return relative === "" ? undefined : steeringSpelling(relative.split(path.sep));
}

/** The names of `file` below `dir` (none when it is `dir`), compared ignoring case; undefined when outside. */
function namesBelow(file: string, dir: string): readonly string[] | undefined {
  const names = file.split(path.sep);
  const prefix = dir.split(path.sep);
  const inside =
    names.length >= prefix.length &&
    prefix.every((name, i) => name.toLowerCase() === (names[i] ?? "").toLowerCase());
  return inside ? names.slice(prefix.length) : undefined;
}

/**
 * The places the skills and instructions are read from in the workspace `root` (a real path),
 * each where its links lead, also when it does not exist yet. One whose real path cannot be found
 * (a file where a folder should be, a loop of links) is left out: the skill loader and the
 * instructions read nothing through it either.
 *
 * Computed afresh on every call, never cached: any link on the way may have been swapped since
 * the last one (a person or another program can, and with the sandbox off a command can change
 * anything), and a stale place would let a write reach a steering file unasked. Each call is kept
 * cheap instead: a skill's folder that is a plain folder in the skills folder (no link, as the
 * listing shows) is there, below the skills folder's real path, with no lookup, and its SKILL.md
 * needs one lstat to show it is no link; only links are resolved in full.
 */
export async function steeringPlaces(root: string): Promise<readonly SteeringPlace[]> {
  const spelled = (folder: boolean, names: readonly string[], real: string): SteeringPlace => ({
    spelling: names.join("/"),
    real,
    folder,
  });
  const place = (folder: boolean, ...names: string[]): Promise<SteeringPlace | undefined> =>
    realpathOfMaybeMissing(path.join(root, ...names)).then(
      (real) => spelled(folder, names, real),
      () => undefined,
    );
  /** A skill's SKILL.md in its plain folder at `folderReal`: no lookup beyond an lstat unless it is a link. */
  const skillFile = async (name: string, folderReal: string): Promise<SteeringPlace | undefined> => {
    const names = [COWORKER_FOLDER, SKILLS_FOLDER, name, SKILL_FILE];
    const file = path.join(folderReal, SKILL_FILE);
    const plain = await lstat(file).then(
      (stats) => !stats.isSymbolicLink(),
      (error: unknown) => isMissing(error),
    );
    return plain ? spelled(false, names, file) : place(false, ...names);
  };
  const skills = await place(true, COWORKER_FOLDER, SKILLS_FOLDER);
  const entries = skills ? await readdir(skills.real, { withFileTypes: true }).catch(() => []) : [];
  const places = await Promise.all([
    place(true, COWORKER_FOLDER),
    ...entries.flatMap((entry) => {
      if (skills === undefined || !entry.isDirectory())
        return [
          place(true, COWORKER_FOLDER, SKILLS_FOLDER, entry.name),
          place(false, COWORKER_FOLDER, SKILLS_FOLDER, entry.name, SKILL_FILE),
        ];
      const folderReal = path.join(skills.real, entry.name);
      return [
        Promise.resolve(spelled(true, [COWORKER_FOLDER, SKILLS_FOLDER, entry.name], folderReal)),
        skillFile(entry.name, folderReal),
      ];
    }),
    place(false, INSTRUCTIONS_FILE),
  ]);
  return [skills, ...places].filter((p): p is SteeringPlace => p !== undefined);
}

/**
 * The steering file a resolved path is, as its workspace spelling through the place it is read
 * from (a file a link at `.coworker/skills` leads to is ".coworker/skills/…"); undefined when the
 * path is none. Only the workspace root's steering files count.
 */
export async function steeringTargetOf(
  paths: WorkspacePaths,
  file: ResolvedPath,
): Promise<string | undefined> {
  const [root] = await paths.realRoots();
  if (root === undefined) return undefined;
  for (const place of await steeringPlaces(root)) {
    const below = namesBelow(file.absolute, place.real);
    if (below !== undefined && (place.folder || below.length === 0))
      return [place.spelling, ...below].join("/");
  }
  return undefined;
}

/**
 * Why a write to `file` (resolved from the proposed path `requested`) may not go on, or undefined
 * when it may: a steering file other than the one `requested` names lexically (which the
 * permission engine already put to a person) is put to the engine again as the call's path — a
 * card of its own — and the write goes on only when that is approved.
 */
export async function steeringRefusal(
  paths: WorkspacePaths,
  requested: string,
  file: ResolvedPath,
  context: Pick<ToolContext, "reauthorize">,
): Promise<string | undefined> {
  const target = await steeringTargetOf(paths, file);
  if (target === undefined) return undefined;
  if (steeringPathOf(requested, paths.root)?.toLowerCase() === target.toLowerCase()) return undefined;
  if (await context.reauthorize?.({ path: target }, "steering-file")) return undefined;
  return `${requested} is ${target}, which steers every later session: writing it needs a person's approval, and it was not given`;
}
