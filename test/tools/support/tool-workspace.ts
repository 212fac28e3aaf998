/**
 * The workspace a tool test hands its tools: a ConversationWorkspace over given roots, and a fresh
 * temporary workspace per test (made before each test, removed after) for the files that set up
 * their tools the same way.
 */
import { afterEach, beforeEach } from "vitest";
import {
  type ConversationWorkspace,
  conversationWorkspace,
} from "../../../src/tools/files/conversation-workspace.js";
import {
  createWorkspacePaths,
  type WorkspaceRootsOptions,
} from "../../../src/tools/files/workspace-paths.js";
import { tempDir } from "./tool-context.js";

/** The tools' view of a workspace over `options`' roots (each call takes its caller's view). */
export function toolWorkspace(options: WorkspaceRootsOptions): ConversationWorkspace {
  return conversationWorkspace(createWorkspacePaths(options));
}

/** The temporary workspace of the running test. */
export interface TempWorkspace {
  /** Its folder (a real path). */
  readonly dir: string;
  /** What the tools are given: the workspace over it, in each caller's view. */
  readonly workspace: ConversationWorkspace;
}

/**
 * A fresh temporary workspace for each test of the calling file, named after `prefix`; its fields
 * are those of the running test. `offLimits` names the service's own files in it.
 */
export function useTempWorkspace(
  prefix: string,
  offLimits: (dir: string) => readonly string[] = () => [],
): TempWorkspace {
  let current: (TempWorkspace & { readonly cleanup: () => Promise<void> }) | undefined;
  const now = () => {
    if (current === undefined) throw new Error("the temporary workspace exists only while a test runs");
    return current;
  };
  beforeEach(async () => {
    const { dir, cleanup } = await tempDir(prefix);
    current = { dir, workspace: toolWorkspace({ root: dir, offLimits: offLimits(dir) }), cleanup };
  });
  afterEach(async () => {
    await current?.cleanup();
    current = undefined;
  });
  return {
    get dir() {
      return now().dir;
    },
    get workspace() {
      return now().workspace;
    },
  };
}
