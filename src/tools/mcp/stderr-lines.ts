/**
 * A stdio MCP server's stderr, read as lines for the log and the failure hint. A server is not
 * trusted with the log either: of a line still being written at most `maxChars` is held, and a
 * longer one is reported once, cut, with the rest of it dropped up to its newline. So a server that
 * writes without newlines costs one log line and `maxChars` of memory however much it writes, and
 * a line split across chunks is still one line. A line is scrubbed of secrets (logging/redact.ts)
 * before it is cut, with SECRET_ROOM characters past the cut read for that: cut first, a server's
 * credential (its env holds them) standing across the cut reached the log in part, which no
 * scrub recognises.
 */
import { StringDecoder } from "node:string_decoder";
import type { Stream } from "node:stream";
import { clipWithMarker } from "../../core/surrogate-pairs.js";
import { scrubSecrets } from "../../logging/redact.js";

/** Characters past the cut read so that a secret across it is scrubbed whole. */
const SECRET_ROOM = 256;

/** Calls `onLine` with each non-blank line of `stream` (scrubbed, cut to `maxChars`), and the unended rest at its end. */
export function readStderrLines(stream: Stream, maxChars: number, onLine: (line: string) => void): void {
  const decoder = new StringDecoder("utf8");
  let partial = "";
  let dropping = false;
  const held = maxChars + SECRET_ROOM;
  const report = (line: string) => {
    if (line.trim() === "") return;
    onLine(clipWithMarker(scrubSecrets(clipWithMarker(line, held, () => "")), maxChars, () => ""));
  };
  const take = (text: string) => {
    const lines = text.split("\n");
    const last = lines.pop() ?? "";
    for (const line of lines) {
      if (!dropping) report(partial + line);
      partial = "";
      dropping = false;
    }
    if (dropping) return;
    partial += last;
    if (partial.length >= held) {
      report(partial);
      partial = "";
      dropping = true;
    }
  };
  stream.on("data", (chunk: Buffer) => take(decoder.write(chunk)));
  stream.on("end", () => {
    take(decoder.end());
    if (!dropping) report(partial);
  });
}
