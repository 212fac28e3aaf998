/**
 * The category the permission engine and the modes trust for a call. `interactive` runs unasked
 * in every mode and is offered in the read-only ones: it is for the built-in tools that only talk
 * with the person (update_plan, ask_user, propose_plan, which the engine answers itself), known
 * here by identity, not by what a definition claims. Any other tool claiming it (an MCP server's,
 * a module's, whatever source of tools comes next) counts as `exec`, so it asks like any action;
 * the config's refusal of an MCP server's `risk: interactive` is then not the only guard.
 */
import type { ToolCategory } from "../core/events.js";
import { type AnyTool, callCategory } from "../core/tool.js";
import { interactiveTools } from "./interactive-tools.js";

const BUILT_IN_INTERACTIVE: ReadonlySet<AnyTool> = new Set<AnyTool>(interactiveTools);

/** Whether `tool` is one of the built-in interactive tools themselves (not one named or marked like them). */
export function isBuiltInInteractive(tool: AnyTool): boolean {
  return BUILT_IN_INTERACTIVE.has(tool);
}

/** The category of one call (`callCategory`), with `interactive` kept only for a built-in interactive tool. */
export function trustedCategory(tool: AnyTool, args: Readonly<Record<string, unknown>>): ToolCategory {
  const category = callCategory(tool, args);
  return category === "interactive" && !isBuiltInInteractive(tool) ? "exec" : category;
}
