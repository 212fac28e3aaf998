/**
 * How a tool shared by every session holds the workspace: a ConversationWorkspace has no paths of
 * its own to hand out, only the view of the conversation a request comes from
 * (conversation-paths.ts). The tools that act on files for a caller — the file tools, web_fetch's
 * save_to, send_file, save_skill — are given this instead of the whole workspace, so none of them
 * can reach another conversation's uploads by forgetting to take that view.
 */
import type { ConversationExecutionRequest } from "../../core/request.js";
import { threadTargetOf } from "../session-target.js";
import { conversationPaths } from "./conversation-paths.js";
import type { WorkspacePaths } from "./workspace-paths.js";

/** The workspace, reachable only as one request's conversation may use it. */
export interface ConversationWorkspace {
  /** The workspace as the session that made `request` may use it: of uploads/, its conversation's folders. */
  forRequest(request: ConversationExecutionRequest): WorkspacePaths;
}

/** `paths` behind a ConversationWorkspace: every use goes through a request's conversation view. */
export function conversationWorkspace(paths: WorkspacePaths): ConversationWorkspace {
  return Object.freeze({
    forRequest: (request: ConversationExecutionRequest) => conversationPaths(paths, threadTargetOf(request)),
  });
}
