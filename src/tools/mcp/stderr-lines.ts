/**
 * A stdio MCP server's stderr, read as lines for the log and the failure hint. A server is not
 * trusted with the log either: of a line still being written at most `maxChars` is held, and a
 * longer one is reported once, cut, with the rest of it dropped up to its newline. So a server that
 * writes without newlines costs one log line and `maxChars` of memory however much it writes, and
 * a line split across chunks is still one line.
 */
import { StringDecoder } from "node:string_decoder";
import type { Stream } from "node:stream";
import { clipWithMarker } from "../../core/surrogate-pairs.js";

/** Calls `onLine` with each non-blank line of `stream` (cut to `maxChars`), and the unended rest at its end. */
export function readStderrLines(stream: Stream, maxChars: number, onLine: (line: string) => void): void {
  const decoder = new StringDecoder("utf8");
  let partial = "";
  let dropping = false;
  const report = (line: string) => {
    if (line.trim() === "") return;
    onLine(clipWithMarker(line, maxChars, () => ""));
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
    if (partial.length >= maxChars) {
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
