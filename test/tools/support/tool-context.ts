/**
 * Test support for tools: a ToolContext with a real request snapshot, a controllable abort
 * signal, recorded live output and fresh session facts; plus temporary workspace directories.
 */
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createRequest } from "../../../src/core/request.js";
import type { ThreadTarget } from "../../../src/core/thread-target.js";
import type { AnyTool, ToolContext, ToolResult } from "../../../src/core/tool.js";

/** A ToolContext plus handles to drive and inspect it. */
export interface TestContext extends ToolContext {
  readonly controller: AbortController;
  readonly emitted: string[];
}

/** The thread a test session runs in. */
export const TEST_TARGET: ThreadTarget = {
  platform: "slack",
  workspace: "T1",
  channel: "C1",
  thread: "1700000000.000100",
};

/** Build a context for one call. */
export function makeContext(
  options: { root?: string; metadata?: Record<string, unknown>; userId?: string } = {},
): TestContext {
  const controller = new AbortController();
  const emitted: string[] = [];
  return {
    request: createRequest({
      prompt: "test",
      messages: [],
      sessionId: "s1",
      platform: "slack",
      model: "test-model",
      workspace: { root: options.root ?? "/tmp", context: "" },
      requester: { userId: options.userId ?? "U1", displayName: "Tester" },
      mode: "auto",
      metadata: options.metadata ?? { target: TEST_TARGET },
    }),
    callId: "call-1",
    signal: controller.signal,
    emitOutput: (line) => emitted.push(line),
    facts: { downloadedFiles: new Set<string>() },
    controller,
    emitted,
  };
}

/** Validate raw arguments with the tool's schema (as the registry does) and run it. */
export async function call(
  tool: AnyTool,
  args: unknown,
  context: ToolContext = makeContext(),
): Promise<ToolResult> {
  return tool.execute(tool.inputSchema.parse(args), context);
}

/** A fresh real (symlink-free) temporary directory and its cleanup. */
export async function tempDir(
  prefix = "coworker-tools-",
): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await realpath(await mkdtemp(path.join(tmpdir(), prefix)));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}
