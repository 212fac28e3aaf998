/**
 * The frame the file tools run their work in: confine the requested path to the workspace, do the
 * work on the resolved file, and answer any failure (outside the workspace, not text, missing,
 * denied, …) with a one-line error naming the path as far as it was resolved.
 */
import { fail, type ToolResult } from "../../core/tool.js";
import { fileErrorMessage } from "./fs-errors.js";
import type { ResolvedPath, WorkspacePaths } from "./workspace-paths.js";

/** Resolve `requested` in the workspace and run `work` on it; whatever it throws becomes a failed result. */
export async function onWorkspacePath(
  paths: WorkspacePaths,
  requested: string,
  work: (file: ResolvedPath) => Promise<ToolResult>,
): Promise<ToolResult> {
  let shown = requested;
  try {
    const file = await paths.resolve(requested);
    shown = file.display;
    return await work(file);
  } catch (error) {
    return fail(fileErrorMessage(error, shown));
  }
}
