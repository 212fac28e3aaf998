/**
 * Tool: one capability the agent can call, declared once with its zod input schema and the
 * metadata the permission engine and the scheduler need. Executors receive validated arguments.
 */
import type { z } from "zod";
import type { ToolCategory } from "../engine/events.js";
import type { ConversationExecutionRequest } from "../engine/request.js";

export type ToolRisk = "low" | "medium" | "high";
/** Which argument a standing "always" grant may pin for this tool. */
export type GrantKey = "command" | "path" | "domain";

/** Facts about a session that outlive one turn and that tools and permissions share. */
export interface SessionFacts {
  /** Workspace-relative or absolute paths of files the agent downloaded this session. */
  readonly downloadedFiles: Set<string>;
}

export interface ToolContext {
  readonly request: ConversationExecutionRequest;
  readonly callId: string;
  /** Aborted when the turn is interrupted. */
  readonly signal: AbortSignal;
  /** Report a line of live output (becomes a `tool-output-delta` event). */
  emitOutput(line: string): void;
  readonly facts: SessionFacts;
}

export interface ToolResult {
  readonly ok: boolean;
  readonly output: string;
  /** Files the tool produced or changed (workspace paths). */
  readonly files?: readonly string[];
}

/** What an approval card shows for a call: a one-line summary and an optional detail block. */
export interface ToolPreview {
  readonly summary: string;
  readonly detail?: { readonly kind: "code" | "diff" | "url" | "text"; readonly text: string };
}

export interface ToolDefinition<Schema extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Schema;
  /** Raw JSON Schema to advertise instead of converting `inputSchema` (MCP tools bring their own). */
  readonly jsonSchema?: Readonly<Record<string, unknown>>;
  readonly category: ToolCategory;
  readonly risk: ToolRisk;
  /** May run at the same time as other concurrent-safe calls of the same step. */
  readonly concurrent: boolean;
  readonly grantKey?: GrantKey;
  execute(args: z.infer<Schema>, context: ToolContext): Promise<ToolResult>;
  /** What the approval card shows (diff for edits, command, URL). Defaults to the JSON args. */
  preview?(args: z.infer<Schema>, context: Pick<ToolContext, "request" | "facts">): Promise<ToolPreview>;
}

/** Declare a tool with its argument types inferred from the schema. */
export function defineTool<Schema extends z.ZodType>(
  definition: ToolDefinition<Schema>,
): ToolDefinition<Schema> {
  return Object.freeze(definition);
}

/** A tool whose argument types are erased, as held by the registry. */
// biome-ignore lint/suspicious/noExplicitAny: the registry validates arguments with the schema at run time
export type AnyTool = ToolDefinition<any>;

/** Shorthand results. */
export const ok = (output: string, files?: readonly string[]): ToolResult =>
  files ? { ok: true, output, files } : { ok: true, output };
export const fail = (output: string): ToolResult => ({ ok: false, output });
