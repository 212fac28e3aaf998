/**
 * run_command over a workspace root with the short kill grace and output drain tests use, so a
 * test that kills or times out a command does not wait the service's defaults.
 */
import { createWorkspacePaths } from "../../../src/tools/files/workspace-paths.js";
import { createRunCommandTool, type RunCommandOptions } from "../../../src/tools/shell/run-command.js";

/** run_command on `root` (300 ms kill grace, 200 ms drain), with `options` over those. */
export function quickRunCommand(root: string, options: Partial<Omit<RunCommandOptions, "paths">> = {}) {
  return createRunCommandTool({
    paths: createWorkspacePaths({ root }),
    killGraceMs: 300,
    drainMs: 200,
    ...options,
  });
}
