/**
 * What one MCP server may put in front of the model. A server's tools are attached to every model
 * call of every session, so an unbounded list — thousands of tools, descriptions or schemas of
 * megabytes, a schema the provider refuses — would fail every turn (providers cap the number of
 * tools, OpenAI at 128; the context overflows; an invalid schema is a 400), not only that
 * server's calls. So a server keeps at most MAX_TOOLS_PER_SERVER tools, in its listing order; a
 * description is cut to MAX_DESCRIPTION_CHARS, marked as cut; a tool is dropped rather than sent
 * when its name is not TOOL_NAME (the MCP specification's 1 to MAX_NAME_CHARS letters, digits,
 * _, - or .: the approval card's headline names the tool, and a name of lines, quotes and bidi
 * controls could forge a read-only call on another server), or its input schema is not a plain
 * object schema (type "object" at the top, no top-level anyOf / oneOf / allOf / not / enum / if,
 * which providers refuse), nests deeper than MAX_SCHEMA_DEPTH or serializes to more than
 * MAX_SCHEMA_BYTES. Only the fields the agent uses are kept (not output schemas, icons, _meta).
 * The tools kept together hold at most MAX_LISTING_BYTES of names, descriptions and schemas: each
 * within its own bounds, 64 tools of a 16 KB schema and a 1 KB description still made over a
 * megabyte (some 280,000 tokens) in every model request, past any model's context, so one server
 * failed every turn of every chat; a tool that would go past it is dropped.
 * Each entry of the listing is checked as an MCP tool on its own, and only the first
 * MAX_TOOLS_EXAMINED of them: checked whole by the SDK, a listing of 100,000 entries of `{}` (300 KB)
 * held the event loop seconds on every start, and a few megabytes of them took the process past its
 * heap; the entries past the first MAX_TOOLS_EXAMINED are counted, not read.
 * Once the list is full (MAX_TOOLS_PER_SERVER kept, MAX_TOOLS_EXAMINED read, or no tool fits what
 * is left of MAX_LISTING_BYTES) no further page of it is asked for: each page may be a message of
 * up to 32 MB, and a server naming page after page had the client read and parse 100 of them on
 * every start attempt, though nothing on them could be kept.
 * What was dropped or cut is reported once per listing, by count and reason, never with the
 * server's text.
 *
 * This bounds one server: McpManager offers as many tools of all servers as one request has room
 * for, and several servers near their bounds can still fill a small model's context together.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { formatBytes } from "../../core/attachment.js";
import { clipWithMarker } from "../../core/surrogate-pairs.js";

export const MAX_TOOLS_PER_SERVER = 64;
/** Entries of one listing checked at most (a malformed one costs the check about 20 µs). */
export const MAX_TOOLS_EXAMINED = 1024;
export const MAX_DESCRIPTION_CHARS = 1024;
export const MAX_NAME_CHARS = 128;
const TOOL_NAME = new RegExp(`^[A-Za-z0-9_.-]{1,${MAX_NAME_CHARS}}$`);
export const MAX_SCHEMA_BYTES = 16 * 1024;
/** Levels of JSON objects and arrays in an input schema (`{"type":"object"}` is 1). */
export const MAX_SCHEMA_DEPTH = 32;
/** Bytes of names, descriptions and input schemas of the tools one server is offered with (some 32,000 tokens). */
export const MAX_LISTING_BYTES = 128 * 1024;

/** The least bytes a tool kept takes: a one-character name, the schema `{"type":"object"}`, no description. */
const SMALLEST_TOOL_BYTES = 1 + Buffer.byteLength(JSON.stringify({ type: "object" }));

const DESCRIPTION_CUT_MARK = " … [description cut]";
const TOP_LEVEL_REFUSED = ["anyOf", "oneOf", "allOf", "not", "enum", "if", "then", "else"];

/** How deep `value` nests, counted only as far as `limit + 1`. */
function depthOf(value: unknown, limit: number): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const [node, depth] = item;
    if (node === null || typeof node !== "object") continue;
    deepest = Math.max(deepest, depth);
    if (depth > limit) return deepest;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return deepest;
}

/** The bytes of `schema` when a provider will take it as a tool's parameters within the bounds, else undefined. */
function acceptedSchemaBytes(schema: Tool["inputSchema"]): number | undefined {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return undefined;
  if (schema.type !== "object" || TOP_LEVEL_REFUSED.some((key) => key in schema)) return undefined;
  if (depthOf(schema, MAX_SCHEMA_DEPTH) > MAX_SCHEMA_DEPTH) return undefined;
  const bytes = Buffer.byteLength(JSON.stringify(schema));
  return bytes <= MAX_SCHEMA_BYTES ? bytes : undefined;
}

function cut(text: string): string {
  return clipWithMarker(text, MAX_DESCRIPTION_CHARS, () => DESCRIPTION_CUT_MARK);
}

/** The tools of one listing that may be offered, gathered page by page, and what was left out. */
export class BoundedToolList {
  readonly tools: Tool[] = [];
  private listed = 0;
  private overCap = 0;
  private unread = 0;
  private malformed = 0;
  private badName = 0;
  private badSchema = 0;
  private overBudget = 0;
  private descriptionsCut = 0;
  /** Bytes of the kept tools' names, descriptions and schemas. */
  private bytes = 0;
  /** Whether the listing named a further page, left unasked as the list was full. */
  private pagesLeft = false;

  /** Whether no entry of a further page could be kept or read (the tool cap, the entries read or the bytes reached). */
  get full(): boolean {
    return (
      this.tools.length >= MAX_TOOLS_PER_SERVER ||
      this.listed >= MAX_TOOLS_EXAMINED ||
      MAX_LISTING_BYTES - this.bytes < SMALLEST_TOOL_BYTES
    );
  }

  /** Record that the listing names a further page, not asked for as the list is full. */
  leaveFurtherPages(): void {
    this.pagesLeft = true;
  }

  /**
   * Take one page of the listing, each entry made a Tool by `asTool` (undefined: it is not one);
   * only the tools kept are held.
   */
  add(page: readonly unknown[], asTool: (entry: unknown) => Tool | undefined): void {
    for (const entry of page) {
      this.listed += 1;
      if (this.tools.length >= MAX_TOOLS_PER_SERVER) {
        this.overCap += 1;
        continue;
      }
      if (this.listed > MAX_TOOLS_EXAMINED) {
        this.unread += 1;
        continue;
      }
      const tool = asTool(entry);
      if (tool === undefined) this.malformed += 1;
      else if (typeof tool.name !== "string" || !TOOL_NAME.test(tool.name)) this.badName += 1;
      else this.check(tool);
    }
  }

  /** Keep `tool` (its name already checked) when its schema is accepted and it fits the budget. */
  private check(tool: Tool): void {
    const schemaBytes = acceptedSchemaBytes(tool.inputSchema);
    if (schemaBytes === undefined) {
      this.badSchema += 1;
      return;
    }
    const text = tool.description ?? tool.title;
    const description = text === undefined ? undefined : cut(text);
    const bytes = schemaBytes + Buffer.byteLength(tool.name) + Buffer.byteLength(description ?? "");
    if (this.bytes + bytes > MAX_LISTING_BYTES) {
      this.overBudget += 1;
      return;
    }
    this.bytes += bytes;
    if (description !== text) this.descriptionsCut += 1;
    this.tools.push(this.kept(tool, description));
  }

  private kept(tool: Tool, description: string | undefined): Tool {
    const hints = tool.annotations;
    const annotations = {
      ...(typeof hints?.readOnlyHint === "boolean" ? { readOnlyHint: hints.readOnlyHint } : {}),
      ...(typeof hints?.destructiveHint === "boolean" ? { destructiveHint: hints.destructiveHint } : {}),
    };
    return {
      name: tool.name,
      inputSchema: tool.inputSchema,
      ...(description === undefined ? {} : { description }),
      ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
    };
  }

  /** A log line on what was dropped or cut (counts and reasons only), or undefined when nothing was. */
  report(): { fields: Record<string, unknown>; message: string } | undefined {
    const dropped = this.listed - this.tools.length;
    if (dropped === 0 && this.descriptionsCut === 0 && !this.pagesLeft) return undefined;
    const reasons = [
      this.overCap > 0 ? `${this.overCap} over the cap of ${MAX_TOOLS_PER_SERVER} tools per server` : "",
      this.unread > 0 ? `${this.unread} listed after the first ${MAX_TOOLS_EXAMINED}, not read` : "",
      this.malformed > 0 ? `${this.malformed} that are not MCP tools` : "",
      this.badName > 0
        ? `${this.badName} with a name that is not 1 to ${MAX_NAME_CHARS} letters, digits, _, - or .`
        : "",
      this.badSchema > 0
        ? `${this.badSchema} with an input schema that is not an object schema, nests over ${MAX_SCHEMA_DEPTH} levels or is over ${formatBytes(MAX_SCHEMA_BYTES)}`
        : "",
      this.overBudget > 0
        ? `${this.overBudget} past ${formatBytes(MAX_LISTING_BYTES)} of names, descriptions and schemas`
        : "",
    ].filter(Boolean);
    const parts = [
      dropped > 0 ? `${dropped} of its ${this.listed} tools not offered (${reasons.join("; ")})` : "",
      this.descriptionsCut > 0
        ? `${this.descriptionsCut} tool descriptions cut to ${MAX_DESCRIPTION_CHARS} characters`
        : "",
      this.pagesLeft ? "the further pages of its list not asked for, the list being full" : "",
    ].filter(Boolean);
    return {
      fields: {
        listed: this.listed,
        offered: this.tools.length,
        dropped: {
          overCap: this.overCap,
          unread: this.unread,
          malformed: this.malformed,
          name: this.badName,
          schema: this.badSchema,
          overBudget: this.overBudget,
        },
        descriptionsCut: this.descriptionsCut,
        furtherPagesLeft: this.pagesLeft,
      },
      message: parts.join("; "),
    };
  }
}
