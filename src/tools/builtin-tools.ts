/**
 * The built-in tool set of one session, built from options (no globals): workspace file tools,
 * run_command, web_fetch, and — when their dependencies are given — the memory and messaging
 * tools. MCP tools come from McpManager.tools(); interactive tools from interactive-tools.ts.
 * Files people send stay in their conversation: no tool reaches another's uploads.
 */
import { conversationWorkspace } from "./files/conversation-workspace.js";
import { createEditFileTool } from "./files/edit-file.js";
import { createListFilesTool } from "./files/list-files.js";
import { createReadFileTool } from "./files/read-file.js";
import { createSearchFilesTool } from "./files/search-files.js";
import { createWorkspacePaths, type WorkspaceRootsOptions } from "./files/workspace-paths.js";
import { createWriteFileTool } from "./files/write-file.js";
import { createMemoryTools, type MemoryToolsOptions } from "./memory/memory-tools.js";
import { createMessagingTools } from "./messaging/messaging-tools.js";
import type { Messenger } from "./messaging/messenger.js";
import { createRunCommandTool, type RunCommandOptions } from "./shell/run-command.js";
import type { AnyTool } from "../core/tool.js";
import { createWebFetchTool, type WebFetchOptions } from "./web/web-fetch.js";

/** Limits of the file tools. */
export interface FileToolLimits {
  readonly maxReadLines?: number;
  readonly maxFileBytes?: number;
  readonly maxListEntries?: number;
  readonly maxSearchResults?: number;
  /** false forces search_files' JS engine. */
  readonly useRipgrep?: boolean;
}

/** Everything the built-in tools depend on. */
export interface BuiltinToolsOptions {
  /** The workspace root (COWORKER_WORKSPACE) and extra roots from config. */
  readonly workspace: WorkspaceRootsOptions;
  readonly files?: FileToolLimits;
  readonly runCommand?: Omit<RunCommandOptions, "paths">;
  readonly webFetch?: Omit<WebFetchOptions, "workspace">;
  /** Memory tools are included only when given. */
  readonly memory?: MemoryToolsOptions;
  /** send_message / send_file are included only when given. */
  readonly messenger?: Messenger;
}

/**
 * Build the built-in tools: read_file, list_files, search_files, write_file, edit_file,
 * run_command, web_fetch, then remember / memory_update / memory_forget and send_message /
 * send_file when their dependencies are present.
 */
export function createBuiltinTools(options: BuiltinToolsOptions): AnyTool[] {
  // These tools are shared by every session. Those that act on files for a caller hold only the
  // workspace per conversation (conversation-workspace.ts); run_command takes the whole workspace
  // and masks the other conversations' uploads in its sandbox (shell/conversation-uploads.ts).
  const paths = createWorkspacePaths(options.workspace);
  const workspace = conversationWorkspace(paths);
  const limits = options.files ?? {};
  const tools: AnyTool[] = [
    createReadFileTool({ workspace, maxLines: limits.maxReadLines, maxFileBytes: limits.maxFileBytes }),
    createListFilesTool({ workspace, maxEntries: limits.maxListEntries }),
    createSearchFilesTool({
      workspace,
      maxResults: limits.maxSearchResults,
      useRipgrep: limits.useRipgrep,
      maxFileBytes: limits.maxFileBytes,
    }),
    createWriteFileTool({ workspace, maxFileBytes: limits.maxFileBytes }),
    createEditFileTool({ workspace, maxFileBytes: limits.maxFileBytes }),
    createRunCommandTool({ ...options.runCommand, paths }),
    createWebFetchTool({ ...options.webFetch, workspace }),
  ];
  if (options.memory) tools.push(...createMemoryTools(options.memory));
  if (options.messenger) tools.push(...createMessagingTools({ messenger: options.messenger, workspace }));
  return tools;
}
