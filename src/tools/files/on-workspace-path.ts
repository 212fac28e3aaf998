/**
 * The frame the file tools run their work in: confine the requested path to the workspace, do the
 * work on the resolved file, and answer any failure (outside the workspace, not text, missing,
 * denied, …) with a one-line error naming the path as far as it was resolved. A write works in
 * the calling conversation's view of the workspace (conversation-paths.ts), and first has a
 * steering file it reaches unseen put to the permission engine again (steering-files.ts).
 */
import { fail, type ToolContext, type ToolResult } from "../../core/tool.js";
import type { ConversationWorkspace } from "./conversation-workspace.js";
import { fileErrorMessage } from "./fs-errors.js";
import { steeringRefusal } from "./steering-files.js";
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

/**
 * onWorkspacePath for a write, in the view of the conversation the call comes from (of uploads/,
 * only its own folders): when the resolved file is a steering file the proposed path did not
 * name, the write runs only once that file is approved (`steeringRefusal`).
 */
export async function onWorkspaceWrite(
  workspace: ConversationWorkspace,
  requested: string,
  context: Pick<ToolContext, "reauthorize" | "request">,
  work: (file: ResolvedPath) => Promise<ToolResult>,
): Promise<ToolResult> {
  const paths = workspace.forRequest(context.request);
  return onWorkspacePath(paths, requested, async (file) => {
    const refused = await steeringRefusal(paths, requested, file, context);
    return refused === undefined ? work(file) : fail(refused);
  });
}
