/**
 * Bench support: the ToolContext a bench hands a tool it calls directly — an auto-mode request on
 * a workspace, no output listener, nothing downloaded — so tool benches measure the tool alone.
 */
import { createRequest } from "../../src/core/request.js";
import type { ToolContext } from "../../src/core/tool.js";

/** A context for calling a tool in the workspace `root`. */
export function benchToolContext(root: string): ToolContext {
  return {
    request: createRequest({
      prompt: "bench",
      messages: [],
      sessionId: "bench",
      platform: "console",
      model: "bench",
      workspace: { root, context: "" },
      requester: { userId: "U1", displayName: "Bench" },
      mode: "auto",
    }),
    callId: "bench",
    signal: new AbortController().signal,
    emitOutput: () => undefined,
    facts: { downloadedFiles: new Set<string>() },
  };
}
