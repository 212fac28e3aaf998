/**
 * The workspace a tool test hands its tools: the tools that act on files for a caller take a
 * ConversationWorkspace, not the workspace's paths, so a test builds one over the roots it made.
 */
import {
  type ConversationWorkspace,
  conversationWorkspace,
} from "../../../src/tools/files/conversation-workspace.js";
import {
  createWorkspacePaths,
  type WorkspaceRootsOptions,
} from "../../../src/tools/files/workspace-paths.js";

/** The tools' view of a workspace over `options`' roots (each call takes its caller's view). */
export function toolWorkspace(options: WorkspaceRootsOptions): ConversationWorkspace {
  return conversationWorkspace(createWorkspacePaths(options));
}
