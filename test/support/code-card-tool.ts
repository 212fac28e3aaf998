/**
 * A stack extension with a tool whose approval card shows its argument as code, as run_command's
 * does: `run_command` (exec, so it asks in interactive mode) records its `command` and runs
 * nothing. With the session test tools beside it, a card for a command of any length can be
 * raised end to end on either platform without a sandbox; `runThenReport` is the model's script
 * that calls it.
 */
import { z } from "zod";
import { defineTool, ok } from "../../src/core/tool.js";
import type { FakeHandler } from "../fakes/fake-openai.js";
import { sessionTestRegistry } from "../sessions/helpers/test-tools.js";
import { engineFactory, type StackExtension } from "./session-stack.js";

/** The tool's name, as the card and the file posted with it name it. */
export const CODE_TOOL = "run_command";

/** Every start of the stack gets the session test tools and the code-card tool. */
export function codeCardTools<C, O>(): StackExtension<C, O> {
  return ({ provider, runs }) => {
    const registry = sessionTestRegistry(runs);
    registry.register(
      defineTool({
        name: CODE_TOOL,
        description: "run a shell command (test: only records it)",
        inputSchema: z.object({ command: z.string() }),
        category: "exec",
        risk: "high",
        concurrent: false,
        async execute(args, ctx) {
          runs.record({ callId: ctx.callId, tool: CODE_TOOL, args });
          return ok(`ran ${args.command.length} characters`);
        },
        async preview(args) {
          return { summary: "Run a command in the workspace", detail: { kind: "code", text: args.command } };
        },
      }),
    );
    return { createEngine: engineFactory(provider, registry) };
  };
}

/** The call id the model gives its call: a name it would like its file to have. */
export const CALL_ID = "evil.html";

/** The model runs `command` (under CALL_ID), then reports the tool's answer ("Tool said: …"). */
export function runThenReport(command: string): FakeHandler {
  return ({ body }) => {
    const last = body.messages.at(-1);
    if (last?.role === "tool") return { text: `Tool said: ${last.content}` };
    return { toolCalls: [{ id: CALL_ID, name: CODE_TOOL, arguments: JSON.stringify({ command }) }] };
  };
}
