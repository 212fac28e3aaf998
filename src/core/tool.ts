/**
 * Tool: one capability the agent can call, declared once with its zod input schema and the
 * metadata the permission engine and the scheduler need. Executors receive validated arguments.
 */
import type { z } from "zod";
import type { ToolCategory } from "./events.js";
import type { ConversationExecutionRequest } from "./request.js";
import type { ImageAttachment } from "./attachment.js";
import { clip } from "./surrogate-pairs.js";

export type ToolRisk = "low" | "medium" | "high";
/** Which argument a standing "always" grant may pin for this tool. */
export type GrantKey = "command" | "path" | "domain";

/** Facts about a session that outlive one turn and that tools and permissions share. */
export interface SessionFacts {
  /** Workspace-relative or absolute paths of files the agent downloaded into the workspace (by any session on it). */
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
  /**
   * A person approved this very call on its card, so what it carries was seen by a person — not
   * cleared by a standing grant, the mode, a rule or the reviewer. Absent outside the engine: false.
   */
  readonly approvedByPerson?: boolean;
  /**
   * For a call of a tool that binds its preview, approved on its card: the preview made just before
   * the run, whose fingerprint matched the approved card's. A tool may run the plan it built for
   * that preview instead of planning again. Absent otherwise.
   */
  readonly checkedPreview?: ToolPreview;
  /**
   * Put a changed target of this running call (e.g. web_fetch's next redirect hop: `{ url }`)
   * to the permission engine again, asking a person on a card of its own (keyed by `hop`) when
   * it says ask. True when the call may go on. Absent outside the engine: treat as refused.
   */
  reauthorize?(changed: Readonly<Record<string, unknown>>, hop: string): Promise<boolean>;
}

export interface ToolResult {
  readonly ok: boolean;
  readonly output: string;
  /** Files the tool produced or changed (workspace paths). */
  readonly files?: readonly string[];
  /**
   * Images the model should see with the result (sent as image parts to a vision model). Images
   * only: what follows a run of tool results goes to the model in a user message, and no tool's
   * words (a file note, file text) may speak there — only a person's typed answer's files do
   * (CallAnswer.answerFiles).
   */
  readonly attachments?: readonly ImageAttachment[];
  /** A few words on how the call ended, for status lines ("exit 1", "timed out after 120 s"). */
  readonly summary?: string;
}

/** What an approval card shows for a call: a one-line summary and an optional detail block. */
export interface ToolPreview {
  readonly summary: string;
  readonly detail?: { readonly kind: "code" | "diff" | "url" | "text"; readonly text: string };
  /**
   * For a tool that binds its preview (`bindsPreview`): a fingerprint of exactly what the call
   * would do as planned for this preview (contentFingerprint of the file's current bytes and the
   * new text, a skill's files), not of what the card shows, which may be the same for different
   * content (a diff too long to show). An approved call runs only while this is unchanged.
   */
  readonly fingerprint?: string;
}

export interface ToolDefinition<Schema extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Schema;
  /** Raw JSON Schema to advertise instead of converting `inputSchema` (MCP tools bring their own). */
  readonly jsonSchema?: Readonly<Record<string, unknown>>;
  readonly category: ToolCategory;
  /** The category of one call when it depends on its arguments (web_fetch with save_to writes). */
  categoryOf?(args: z.infer<Schema>): ToolCategory;
  readonly risk: ToolRisk;
  /** May run at the same time as other concurrent-safe calls of the same step. */
  readonly concurrent: boolean;
  readonly grantKey?: GrantKey;
  /**
   * Every call asks a person, in every mode that offers the tool (auto included) and over any
   * standing grant — for actions that must always be reviewed (e.g. save_skill).
   */
  readonly alwaysAsks?: boolean;
  /**
   * Its results carry text from outside the conversation — a web page, another channel, an MCP
   * server's data — written by people who may try to steer the agent. The safety reviewer is told
   * when a call follows such a read in the same turn.
   */
  readonly readsOutside?: boolean;
  /**
   * Its card's preview shows what the call will do as read from the workspace when the card was
   * made (a file's diff, a skill's bundled files), and that can change while the card waits or as
   * an earlier call of the same step runs: an approved call then runs only while its preview,
   * made again just before the run, has the approved card's fingerprint (ToolPreview.fingerprint:
   * a preview of such a tool must set it; one without never runs approved).
   */
  readonly bindsPreview?: boolean;
  execute(args: z.infer<Schema>, context: ToolContext): Promise<ToolResult>;
  /** What the approval card shows (diff for edits, command, URL). Defaults to the JSON args. */
  preview?(args: z.infer<Schema>, context: Pick<ToolContext, "request" | "facts">): Promise<ToolPreview>;
  /**
   * A short human label of what one call does, for status lines: the command, the path, the URL.
   * One line, no tool name. Defaults to `compactArgs(args)`.
   */
  label?(args: z.infer<Schema>): string;
  /**
   * True when this call only affects the conversation it was made from (e.g. send_message into
   * its own thread): interactive mode then runs it without asking. Hard denies and channel-content
   * asks still apply.
   */
  staysInConversation?(args: z.infer<Schema>, request: ConversationExecutionRequest): boolean;
  /**
   * Why this call, made from `request`'s conversation, may show its audience what not all of them
   * may see (another channel's messages, the requester's items in every conversation, read into a
   * thread several people share — now, or by a subscription from now on); undefined when it does
   * not. Such a call asks a person outside auto mode, every time — no standing grant, no reviewer
   * model — though reads otherwise run unasked.
   */
  widensAudience?(args: z.infer<Schema>, request: ConversationExecutionRequest): string | undefined;
}

/** The category of one call: the tool's `categoryOf` for these arguments, else its `category`. */
export function callCategory(tool: AnyTool, args: Readonly<Record<string, unknown>>): ToolCategory {
  return tool.categoryOf?.(args) ?? tool.category;
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

/** Longest status-line label, in characters. */
export const LABEL_MAX_CHARS = 80;

/**
 * A text as a one-line label: its first non-blank line with whitespace collapsed, "…" when more
 * lines follow, cut to `max` characters.
 */
export function labelText(text: string, max = LABEL_MAX_CHARS): string {
  const lines = text.split(/\r?\n/).filter((line) => line.trim() !== "");
  const first = (lines[0] ?? "").replace(/\s+/g, " ").trim();
  return clip(lines.length > 1 ? `${first} …` : first, max);
}

const ARG_VALUE_MAX = 40;

/**
 * A compact `key=value` label of a call's scalar arguments (strings, numbers, booleans), in order:
 * strings as their first line cut to 40 characters (quoted when they hold spaces), other values
 * skipped, the whole cut to `max` characters. Never the raw JSON of long content.
 */
export function compactArgs(args: Readonly<Record<string, unknown>>, max = LABEL_MAX_CHARS): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(args)) {
    if (typeof value === "number" || typeof value === "boolean") parts.push(`${key}=${value}`);
    else if (typeof value === "string") {
      const text = labelText(value, ARG_VALUE_MAX);
      parts.push(`${key}=${/\s/.test(text) || text === "" ? JSON.stringify(text) : text}`);
    }
    if (parts.join(" ").length > max) break;
  }
  return clip(parts.join(" "), max);
}

/** Shorthand results. */
export const ok = (output: string, files?: readonly string[]): ToolResult =>
  files ? { ok: true, output, files } : { ok: true, output };
export const fail = (output: string): ToolResult => ({ ok: false, output });

/** A tool as advertised to the model (OpenAI function-tool JSON Schema). */
export interface ToolSchema {
  readonly name: string;
  readonly description: string;
  readonly parameters: Readonly<Record<string, unknown>>;
}
