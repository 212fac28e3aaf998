/**
 * Call identity: the canonical form of a tool call's arguments and the hash of tool + arguments.
 * Two calls are "the same call" exactly when these agree, so a decision (an approval card, an
 * "Allow anyway" grant) can never apply to a call with different arguments.
 */
import { createHash } from "node:crypto";

/** JSON with object keys sorted at every level, so equal values always serialise the same. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** sha256 (hex) of a tool name and its canonical JSON arguments. */
export function callHash(tool: string, args: unknown): string {
  return createHash("sha256").update(tool).update("\u0000").update(canonicalJson(args)).digest("hex");
}
