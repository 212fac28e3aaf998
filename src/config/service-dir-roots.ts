/**
 * The rule that no folder the agent works in (workspace.root, workspace.extra_roots) contains
 * Coworker's own folder (its code, `dist/`, `node_modules/`) or the folder it is started from
 * (where `.env` and `config/coworker.yaml` are looked up). The file tools and the shell sandbox
 * keep those off limits only while they are folders of their own: one that contains a workspace
 * root is dropped from their off-limits list, as a root cannot hide from itself. So a workspace
 * of `.` let the agent write `config/coworker.yaml` (mode auto, sandbox off, its own approvers,
 * read at the next start), a `.env` the sandbox found missing at its first command, or code the
 * host runs outside any sandbox. A workspace inside either folder (`./workspace`) is fine: it does
 * not reach them. Paths are compared as real paths; `start` and `doctor` refuse alike.
 */
import { isWithin } from "../core/real-paths.js";
import type { CoworkerConfig } from "./schema.js";
import { settingLabel } from "./env-overrides.js";
import { realPathAtLoad, shown, workspaceRoots } from "./workspace-roots.js";

/** The folders a workspace root must not contain (Coworker's own, and the one it starts from). */
export interface ServiceFolders {
  readonly serviceDir: string;
  readonly cwd: string;
}

/**
 * One problem per workspace root that is, or contains, Coworker's folder or the folder it starts
 * from, naming both and the fix; empty otherwise. `sources` maps a dotted config path to the
 * environment variable that set it; `folders` are Coworker's (core/service-dir.ts) and the one
 * the config was loaded from.
 */
export function serviceDirRootProblems(
  config: CoworkerConfig,
  sources: ReadonlyMap<string, string>,
  folders: ServiceFolders,
): string[] {
  const named = (key: string): string => settingLabel(key, sources.get(key));
  const guarded = [
    { what: "Coworker's own folder (its code and dependencies)", real: realPathAtLoad(folders.serviceDir) },
    {
      what: "the folder Coworker starts from (where .env and config/coworker.yaml are read)",
      real: realPathAtLoad(folders.cwd),
    },
  ];
  const problems: string[] = [];
  for (const { key, path, real } of workspaceRoots(config)) {
    const reached = guarded.filter((folder) => isWithin(folder.real, real));
    if (reached.length === 0) continue;
    const list = reached.map((folder) => `${folder.what}, ${folder.real}`).join("; and ");
    problems.push(
      `${named(key)}: ${shown(path, real)} contains ${list}: the agent could rewrite Coworker's ` +
        "configuration or code there. Give the workspace a folder of its own (./workspace, or one " +
        "outside Coworker's folder)",
    );
  }
  return problems;
}
