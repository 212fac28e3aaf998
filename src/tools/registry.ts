/**
 * ToolRegistry: the set of tools one session can use.
 *
 * It decides which tools are advertised to the model for a request (allowed tools and permission
 * mode), converts each zod input schema to JSON Schema once, and turns the model's raw argument
 * text into validated arguments — or into a model-facing error that names the problem (unknown
 * tool, with the tools the request offers; arguments that are not a JSON object; which fields are
 * wrong). It never throws on bad model output.
 */
import { z } from "zod";
import { deepFreeze } from "../core/deep-freeze.js";
import type { FinishReason } from "../core/messages.js";
import type { ToolSchema } from "../core/tool.js";
import { allowsTool, type ConversationExecutionRequest } from "../core/request.js";
import { PROPOSE_PLAN } from "./interactive-tools.js";
import { isBuiltInInteractive } from "./trusted-category.js";
import type { AnyTool } from "../core/tool.js";

/** Mangled-argument diagnosis: the stream was cut off by the output-token limit. */
export const TRUNCATED_ARGUMENTS_ERROR =
  "Your tool-call arguments were cut off by the output-token limit before they finished streaming, so the tool received nothing. " +
  "Send the same content in smaller pieces: several calls that each write or append one section, each well under the limit. " +
  "Do not retry the identical oversized call.";

/** Mangled-argument diagnosis: the text was not a JSON object. */
export const MALFORMED_ARGUMENTS_ERROR =
  "Your tool-call arguments did not parse as a JSON object, so the tool received nothing. " +
  "Re-issue the call with a JSON object that uses the tool's declared parameters.";

export type ParsedArguments =
  | { readonly kind: "object"; readonly value: Record<string, unknown> }
  | { readonly kind: "mangled" };

/** Parse raw argument text: empty text is `{}`; anything but a JSON object is "mangled". */
export function parseToolArguments(raw: string): ParsedArguments {
  if (raw.trim() === "") return { kind: "object", value: {} };
  try {
    const value: unknown = JSON.parse(raw);
    if (value !== null && typeof value === "object" && !Array.isArray(value))
      return { kind: "object", value: value as Record<string, unknown> };
  } catch {
    // fall through: unparseable text is mangled
  }
  return { kind: "mangled" };
}

/** Whether a mode offers this tool at all (plan/discuss are read-only; propose_plan only in plan). */
export function modeOffersTool(tool: AnyTool, mode: ConversationExecutionRequest["mode"]): boolean {
  if (tool.name === PROPOSE_PLAN) return mode === "plan";
  if (mode === "plan" || mode === "discuss") return tool.category === "read" || isBuiltInInteractive(tool);
  return true;
}

function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return "(arguments)";
  return path
    .map((key, i) => (typeof key === "number" ? `[${key}]` : `${i === 0 ? "" : "."}${String(key)}`))
    .join("");
}

export type ValidationResult =
  | { readonly ok: true; readonly tool: AnyTool; readonly args: Record<string, unknown> }
  | { readonly ok: false; readonly error: string };

/** The tools of one session, with cached JSON Schemas and argument validation. */
export class ToolRegistry {
  private readonly tools = new Map<string, AnyTool>();
  private readonly schemaCache = new Map<AnyTool, ToolSchema>();
  private listCache: readonly AnyTool[] | undefined;

  /** Add a tool; throws if a tool with that name is already registered. */
  register(tool: AnyTool): void {
    if (this.tools.has(tool.name)) throw new Error(`tool "${tool.name}" is already registered`);
    this.tools.set(tool.name, tool);
    this.listCache = undefined;
  }

  /** Remove a tool (no-op when absent). */
  unregister(name: string): void {
    const tool = this.tools.get(name);
    if (!tool) return;
    this.tools.delete(name);
    this.schemaCache.delete(tool);
    this.listCache = undefined;
  }

  /** The tool registered under `name`. */
  get(name: string): AnyTool | undefined {
    return this.tools.get(name);
  }

  /** Every registered tool, in registration order. */
  list(): readonly AnyTool[] {
    this.listCache ??= Object.freeze([...this.tools.values()]);
    return this.listCache;
  }

  /** Tools advertised for this request: allowed by the request and offered by its mode. */
  schemasFor(request: ConversationExecutionRequest): readonly ToolSchema[] {
    const out: ToolSchema[] = [];
    for (const tool of this.list()) {
      if (allowsTool(request, tool.name) && modeOffersTool(tool, request.mode)) out.push(this.schemaOf(tool));
    }
    return out;
  }

  /**
   * Parse raw JSON argument text and validate it with the tool's schema. Failures come back as
   * a model-facing error; an unknown tool's names the tools `request` offers (schemasFor), never
   * one its allowed tools or mode leave out; `finishReason` "length" turns unparseable text into
   * the truncation diagnosis instead of the malformed-JSON one.
   */
  validate(
    name: string,
    rawArguments: string,
    request: ConversationExecutionRequest,
    finishReason?: FinishReason,
  ): ValidationResult {
    const tool = this.tools.get(name);
    if (!tool) {
      const names =
        this.schemasFor(request)
          .map((schema) => schema.name)
          .join(", ") || "none";
      return { ok: false, error: `Unknown tool "${name}". Available tools: ${names}.` };
    }
    const parsed = parseToolArguments(rawArguments);
    if (parsed.kind === "mangled")
      return {
        ok: false,
        error: finishReason === "length" ? TRUNCATED_ARGUMENTS_ERROR : MALFORMED_ARGUMENTS_ERROR,
      };
    const schema: z.ZodType = tool.inputSchema;
    const result = schema.safeParse(parsed.value);
    if (result.success) return { ok: true, tool, args: result.data as Record<string, unknown> };
    const problems = result.error.issues.map((issue) => `${formatPath(issue.path)}: ${issue.message}`);
    return {
      ok: false,
      error: `Invalid arguments for ${name} — ${problems.join("; ")}. Re-issue the call with the declared parameters.`,
    };
  }

  private schemaOf(tool: AnyTool): ToolSchema {
    let schema = this.schemaCache.get(tool);
    if (!schema) {
      const parameters = tool.jsonSchema ?? convertSchema(tool.inputSchema);
      schema = Object.freeze({ name: tool.name, description: tool.description, parameters });
      this.schemaCache.set(tool, schema);
    }
    return schema;
  }
}

/**
 * JSON Schemas by zod schema, for every registry: tools are built per session but their input
 * schemas are module constants, and converting them was a quarter of a simple turn's CPU.
 */
const jsonSchemas = new WeakMap<z.ZodType, Readonly<Record<string, unknown>>>();

function convertSchema(schema: z.ZodType): Readonly<Record<string, unknown>> {
  let converted = jsonSchemas.get(schema);
  if (!converted) {
    const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" });
    converted = deepFreeze(rest);
    jsonSchemas.set(schema, converted);
  }
  return converted;
}
