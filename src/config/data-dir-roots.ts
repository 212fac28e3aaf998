/**
 * The rule that no folder the agent works in (workspace.root, workspace.extra_roots) is the data
 * folder or lies inside it. The file tools and the shell sandbox keep the data folder off limits
 * only while it is a folder of its own: one that contains a workspace root is dropped from their
 * off-limits list, as a root cannot hide from itself — so a root equal to data_dir would let the
 * agent read and change the store (coworker.sqlite), the audit log and the MCP servers' folders.
 * A root inside the data folder is refused too: it lives among the service's own files, which the
 * service creates and reads by name (`<data_dir>/skills/` is loaded as skills, `mcp-servers/` is
 * where stdio servers run), so such a root is one of them or may become one. The data folder
 * inside the workspace is fine (it stays off limits there). Paths are compared as real paths
 * (links followed), also for folders that do not exist yet; `start` and `doctor` refuse alike.
 */
import { isWithin } from "../core/real-paths.js";
import type { CoworkerConfig } from "./schema.js";
import { settingLabel } from "./env-overrides.js";
import { realPathAtLoad, shown, workspaceRoots } from "./workspace-roots.js";

/**
 * One problem per workspace root that is the data folder or lies inside it, naming both paths
 * (and the variables that set them) and the fix; empty otherwise. `config` has absolute paths;
 * `sources` maps a dotted config path to the environment variable that set it.
 */
export function dataDirRootProblems(config: CoworkerConfig, sources: ReadonlyMap<string, string>): string[] {
  const named = (key: string): string => settingLabel(key, sources.get(key));
  const dataDir = realPathAtLoad(config.data_dir);
  const data = `the data folder (${named("data_dir")}: ${shown(config.data_dir, dataDir)})`;
  const problems: string[] = [];
  for (const { key, path, real } of workspaceRoots(config)) {
    if (!isWithin(real, dataDir)) continue;
    const where = real === dataDir ? `is ${data}` : `lies inside ${data}`;
    problems.push(
      `${named(key)}: ${shown(path, real)} ${where}, where Coworker keeps its database, audit log, skills ` +
        "and MCP server folders; the agent could read and change them there. Give the workspace and " +
        "data_dir separate folders (the data folder may lie inside the workspace, not the other way round)",
    );
  }
  return problems;
}
