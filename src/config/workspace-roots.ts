/**
 * The folders the agent works in (workspace.root, workspace.extra_roots), each with its config key
 * and its real path, for the load-time rules about where they may lie (data-dir-roots.ts,
 * skill-dir-roots.ts, mcp-server-folders.ts). Real paths are resolved as far as they exist: a
 * check at load cannot require folders that are made later.
 */
import { realPathAllowingMissingSync } from "../core/real-paths.js";
import type { CoworkerConfig } from "./schema.js";

/** A workspace root: the key that set it, the path as configured and its real path. */
interface WorkspaceRoot {
  readonly key: string;
  readonly path: string;
  readonly real: string;
}

/** The real path of `path`, also when missing; a check at load resolves as far as it can. */
export function realPathAtLoad(path: string): string {
  return realPathAllowingMissingSync(path, { bestEffort: true });
}

/** The workspace roots of `config` (absolute paths), the main one first. */
export function workspaceRoots(config: CoworkerConfig): readonly WorkspaceRoot[] {
  const roots: [string, string][] = [
    ["workspace.root", config.workspace.root],
    ...config.workspace.extra_roots.map((root, i): [string, string] => [`workspace.extra_roots[${i}]`, root]),
  ];
  return roots.map(([key, path]) => ({ key, path, real: realPathAtLoad(path) }));
}

/** `/srv/ws`, or `/srv/ws-link → /srv/ws` when a link made the real path differ. */
export function shown(path: string, real: string): string {
  return path === real ? real : `${path} → ${real}`;
}
