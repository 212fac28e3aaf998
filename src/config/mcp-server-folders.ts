/**
 * Where stdio MCP servers run — each in `<data_dir>/mcp-servers/<name>/` — and the rule that
 * those folders lie outside every folder the agent's commands can write (workspace.root and
 * workspace.extra_roots). A stdio server runs on the host, outside the shell sandbox, and what it
 * runs is looked up from its working folder upwards: `npx` takes a package from any parent
 * folder's node_modules/.bin, git finds the repository above, and a relative command or argument
 * resolves there. With data_dir inside the workspace a sandboxed command could plant code that a
 * server then runs on the host, so such a configuration is refused at load, by `start` and
 * `doctor` alike. A server also takes programs and settings from its HOME (`~/.npmrc` names the
 * registry npx installs from, `~/.local/bin` is often on PATH) and its PATH's folders: with one of
 * those inside the workspace, a command could plant an `.npmrc` or an `npx` the server then runs,
 * so that is refused too (HOME and PATH as the server gets them: its own `env`, else the
 * service's). Paths are compared as real paths (links followed), also for folders that do not
 * exist yet; HTTP servers run nothing here and are not concerned.
 */
import { isAbsolute, join } from "node:path";
import { isWithin } from "../core/real-paths.js";
import type { Env } from "./env-overrides.js";
import type { CoworkerConfig, McpServerConfig } from "./schema.js";
import { realPathAtLoad, workspaceRoots } from "./workspace-roots.js";

/** The folder in the data folder that stdio MCP servers run in, one folder each. */
export const MCP_SERVERS_FOLDER = "mcp-servers";

/** The folder stdio servers run in (each in its own subfolder, named after the server). */
export function mcpServersFolder(dataDir: string): string {
  return join(dataDir, MCP_SERVERS_FOLDER);
}

/**
 * One problem per workspace root that holds a stdio server's folder, naming the servers and the
 * fix; empty when every stdio server runs outside the workspace. `config` has absolute paths.
 */
export function mcpServerFolderProblems(config: CoworkerConfig): string[] {
  const stdio = Object.entries(config.tools.mcp_servers)
    .filter(([, server]) => server.transport === "stdio")
    .map(([name]) => name);
  if (stdio.length === 0) return [];
  const servers = realPathAtLoad(mcpServersFolder(config.data_dir));
  const folders = stdio.map((name) => ({ name, real: realPathAtLoad(join(servers, name)) }));
  const problems: string[] = [];
  for (const { key, real } of workspaceRoots(config)) {
    const inside = folders.filter((folder) => isWithin(folder.real, real)).map((folder) => folder.name);
    if (inside.length === 0) continue;
    problems.push(
      `tools.mcp_servers (${inside.join(", ")}): stdio MCP servers run in ${servers}/<name>/, which ` +
        `lies inside the workspace (${key}: ${real}), where the agent's commands write; npx, git and ` +
        "relative paths look there and in the folders above, so a command could plant code that a " +
        "server runs on this host. Move data_dir (COWORKER_DATA_DIR) to a folder outside the workspace " +
        "and its extra roots (servers with a url: are not affected)",
    );
  }
  return problems;
}

/** HOME and the absolute PATH folders a stdio server gets: its own `env`, else the service's `env`. */
function lookupFolders(server: Extract<McpServerConfig, { transport: "stdio" }>, env: Env): string[] {
  const home = server.env.HOME ?? env.HOME;
  const path = server.env.PATH ?? env.PATH ?? "";
  const folders = [home, ...path.split(":")].filter(
    (folder): folder is string => folder !== undefined && isAbsolute(folder),
  );
  return [...new Set(folders)];
}

/**
 * One problem per stdio server and workspace root holding its HOME or one of its PATH folders,
 * naming them and the fix; empty otherwise. `env` is the service's environment, which the
 * servers' environments are made from.
 */
export function mcpServerLookupProblems(config: CoworkerConfig, env: Env): string[] {
  const roots = workspaceRoots(config);
  const problems: string[] = [];
  for (const [name, server] of Object.entries(config.tools.mcp_servers)) {
    if (server.transport !== "stdio") continue;
    const folders = lookupFolders(server, env).map((folder) => ({ folder, real: realPathAtLoad(folder) }));
    for (const { key, real } of roots) {
      const inside = folders.filter((folder) => isWithin(folder.real, real)).map(({ folder }) => folder);
      if (inside.length === 0) continue;
      problems.push(
        `tools.mcp_servers.${name}: its HOME or PATH folders ${inside.join(", ")} lie inside the workspace ` +
          `(${key}: ${real}), where the agent's commands write; a stdio server runs on this host, outside ` +
          "the sandbox, and takes programs and settings from there (an npx, ~/.npmrc), so a command could " +
          "plant code it runs. Give the workspace a folder that holds neither, or set the server's env " +
          "HOME and PATH to folders outside it",
      );
    }
  }
  return problems;
}
