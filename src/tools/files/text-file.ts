/**
 * Reading workspace files as text: binary detection (NUL bytes in the first block, or bytes that
 * are not valid UTF-8) and a size ceiling, shared by read_file, edit_file, search's fallback and
 * save_skill's copied files (which keep their mode).
 */
import type { Stats } from "node:fs";
import { openChecked, readUpTo } from "./anchored-fs.js";
import type { ResolvedPath } from "./workspace-paths.js";

/** How many leading bytes are checked for NUL (git uses the same heuristic). */
const NUL_SCAN_BYTES = 8000;

/** The outcome of decoding a file's bytes. */
export type DecodedText =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "binary"; readonly reason: string };

/** Decode bytes as UTF-8 text, or say why they look binary. */
export function decodeText(bytes: Uint8Array): DecodedText {
  const scanned = bytes.subarray(0, NUL_SCAN_BYTES);
  if (scanned.includes(0)) return { kind: "binary", reason: "it contains NUL bytes" };
  try {
    const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
    return { kind: "text", text };
  } catch {
    return { kind: "binary", reason: "it is not valid UTF-8 text" };
  }
}

/** Thrown when a file cannot be treated as text. */
export class NotTextError extends Error {
  override readonly name: string = "NotTextError";
}

/**
 * Thrown when a file is over the size read whole: its message is the file tools' advice (read it
 * in parts), and a caller with other advice (save_skill) words its own from the size and limit.
 */
export class OversizedFileError extends NotTextError {
  override readonly name = "OversizedFileError";

  constructor(
    /** The file's path, for display. */
    readonly shown: string,
    readonly size: number,
    readonly limit: number,
  ) {
    super(
      `${shown} is ${size} bytes, over the ${limit}-byte limit for text tools; use search_files or run_command (head, sed -n) to look at parts of it`,
    );
  }
}

/**
 * Read a checked workspace file whole as text (opened swap-safely, see anchored-fs.ts), as far as
 * the size it had when opened; throws NotTextError for binary or oversized files.
 */
export async function readTextFile(file: ResolvedPath, maxBytes: number): Promise<string> {
  return (await readTextAndStats(file, maxBytes)).text;
}

/**
 * readTextFile, with the stats of the file as opened: a caller that keeps its mode (a script's
 * executable bit) has it from the very file whose text it read, never from one swapped in since.
 */
export async function readTextAndStats(
  file: ResolvedPath,
  maxBytes: number,
): Promise<{ readonly text: string; readonly stats: Stats }> {
  const shownPath = file.display;
  const { handle, stats } = await openChecked(file);
  let bytes: Buffer;
  try {
    if (stats.isDirectory()) throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
    if (stats.size > maxBytes) throw new OversizedFileError(shownPath, stats.size, maxBytes);
    bytes = await readUpTo(handle, stats.size);
  } finally {
    await handle.close();
  }
  const decoded = decodeText(bytes);
  if (decoded.kind === "binary") {
    throw new NotTextError(
      `${shownPath} looks like a binary file (${decoded.reason}); refusing to read it as text`,
    );
  }
  return { text: decoded.text, stats };
}

/** Split text into lines without inventing a trailing empty line for a final newline. */
export function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}
