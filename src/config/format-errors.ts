/**
 * Turn zod issues into one readable line per problem: the dotted path, where the value came from
 * (file or environment variable), what is wrong and a hint ("did you mean …"). Values of secret
 * keys are never shown, and every line is scrubbed of token-shaped strings as a last guard.
 */
import type { z } from "zod";
import { clip } from "../core/surrogate-pairs.js";
import { isSecretKey, scrubSecrets } from "../logging/redact.js";
import { closestMatch } from "./did-you-mean.js";
import { keyIndex, keysOf, schemaAt } from "./schema-walk.js";

/** Sections whose values are secret whatever their key (MCP env and headers, store credentials). */
const SECRET_SECTIONS = new Set(["env", "headers", "store_url"]);

function isSecretPath(path: readonly PropertyKey[]): boolean {
  return path.some(
    (segment) => typeof segment === "string" && (isSecretKey(segment) || SECRET_SECTIONS.has(segment)),
  );
}

/** `tools.mcp_servers.git.args[0]`; "config" for the top level. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else out += out === "" ? String(segment) : `.${String(segment)}`;
  }
  return out === "" ? "config" : out;
}

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let node = raw;
  for (const segment of path) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<PropertyKey, unknown>)[segment];
  }
  return node;
}

function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  return typeof value === "string" ? "text" : typeof value;
}

/**
 * The offending value for context: scalars only (a mapping may hold secrets), never for secret
 * paths, scrubbed before it is cut (cut first, a token across the cut was no longer one the
 * scrub of the whole line knows, and its first part was shown).
 */
function shown(value: unknown, path: readonly PropertyKey[]): string {
  const scalar = typeof value === "string" || typeof value === "number" || typeof value === "boolean";
  if (!scalar || isSecretPath(path)) return "";
  const text = scrubSecrets(JSON.stringify(value));
  return ` (got ${clip(text, 60)})`;
}

export interface FormatContext {
  readonly schema: z.ZodType;
  /** The raw config that was validated (after env overrides). */
  readonly raw: unknown;
  /** Dotted path → environment variable that set it. */
  readonly sources: ReadonlyMap<string, string>;
}

/** The variable that set `path` or a list or section holding it (COWORKER_APPROVERS for approvers[0]). */
function sourceOf(path: readonly PropertyKey[], context: FormatContext): string | undefined {
  for (let length = path.length; length > 0; length--) {
    const source = context.sources.get(path.slice(0, length).map(String).join("."));
    if (source !== undefined) return source;
  }
  return undefined;
}

function where(path: readonly PropertyKey[], context: FormatContext): string {
  const source = sourceOf(path, context);
  return source === undefined ? formatPath(path) : `${formatPath(path)} (from ${source})`;
}

function unknownKeyHint(parent: readonly PropertyKey[], key: string, context: FormatContext): string {
  const siblings = keysOf(schemaAt(context.schema, parent));
  const close = closestMatch(key, siblings);
  if (close !== undefined) return ` — did you mean "${close}"?`;
  const elsewhere = keyIndex(context.schema).get(key);
  if (elsewhere !== undefined) return ` — this key belongs under ${elsewhere.join(" or ")}`;
  return siblings.length > 0 ? ` — valid keys here: ${siblings.join(", ")}` : "";
}

function unionExpectation(issue: z.core.$ZodIssueInvalidUnion): string | undefined {
  const expected = issue.errors
    .flat()
    .flatMap((inner) => (inner.code === "invalid_type" ? [inner.expected] : []));
  return expected.length > 0 ? [...new Set(expected)].join(" or ") : undefined;
}

function describeIssue(issue: z.core.$ZodIssue, context: FormatContext): string[] {
  const path = issue.path;
  const value = valueAt(context.raw, path);
  switch (issue.code) {
    case "unrecognized_keys":
      return issue.keys.map(
        (key) => `${formatPath([...path, key])}: unknown key${unknownKeyHint(path, key, context)}`,
      );
    case "invalid_type":
      return [
        value === undefined
          ? `${where(path, context)}: is required (expected ${issue.expected})`
          : `${where(path, context)}: expected ${issue.expected}, got ${describeType(value)}`,
      ];
    case "invalid_value": {
      const options = issue.values.map((option) => String(option));
      const close =
        typeof value === "string" && !isSecretPath(path) ? closestMatch(value, options) : undefined;
      const hint = close === undefined ? "" : ` — did you mean "${close}"?`;
      return [`${where(path, context)}: must be one of ${options.join(", ")}${shown(value, path)}${hint}`];
    }
    case "invalid_union": {
      const expected = unionExpectation(issue);
      const message =
        expected === undefined ? issue.message : `expected ${expected}, got ${describeType(value)}`;
      return [`${where(path, context)}: ${message}`];
    }
    default:
      return [`${where(path, context)}: ${issue.message}${shown(value, path)}`];
  }
}

/** One line per problem, in schema order, secrets never included. */
export function formatIssues(issues: readonly z.core.$ZodIssue[], context: FormatContext): string[] {
  return issues.flatMap((issue) => describeIssue(issue, context)).map(scrubSecrets);
}
