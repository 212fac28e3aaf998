/**
 * The rule that no `skills.dirs` folder lies inside a folder the agent works in (workspace.root,
 * workspace.extra_roots), is one, or contains one. The operator's skill sources are trusted: they
 * are read as the operator made them (skills/operator-skill-access.ts: nothing the agent runs can
 * write there) and a skill in them shadows a workspace skill of the same name. Inside a workspace
 * root only `.coworker/` and AGENTS.md are kept from commands (read-only in the sandbox, written
 * only with a person's approval), so a command could plant or rewrite an operator skill there; a
 * skills folder holding a root would be written by the same commands. Refused at load, by `start`
 * and `doctor` alike; paths are compared as real paths (links followed), also for folders that do
 * not exist yet.
 */
import { isWithin } from "../core/real-paths.js";
import type { CoworkerConfig } from "./schema.js";
import { realPathAtLoad, shown, workspaceRoots } from "./workspace-roots.js";

/**
 * One problem per `skills.dirs` entry and workspace root it is, lies in or contains, naming both
 * paths and the fix; empty otherwise. `config` has absolute paths.
 */
export function skillDirRootProblems(config: CoworkerConfig): string[] {
  const roots = workspaceRoots(config);
  const problems: string[] = [];
  config.skills.dirs.forEach((dir, i) => {
    const real = realPathAtLoad(dir);
    for (const root of roots) {
      const where =
        real === root.real
          ? "is"
          : isWithin(real, root.real)
            ? "lies inside"
            : isWithin(root.real, real)
              ? "contains"
              : undefined;
      if (where === undefined) continue;
      problems.push(
        `skills.dirs[${i}]: ${shown(dir, real)} ${where} the workspace (${root.key}: ${shown(root.path, root.real)}), ` +
          "where the agent's commands write without a person's approval; skills there would be trusted as " +
          "the operator's and shadow the workspace's own. Keep skills.dirs outside the workspace and its " +
          "extra roots (a team's skills in the workspace belong in .coworker/skills/)",
      );
    }
  });
  return problems;
}
