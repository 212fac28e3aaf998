/**
 * A text stream read line by line with a bound on what one line may hold: readline keeps a line
 * whole however long it grows, and a program's line can outgrow a JS string (ripgrep's JSON
 * report of a match lists every submatch, so a 12 MB line of "a" matched by `a` is a line of some
 * 900 MB), which readline throws uncaught from its data handler. Here a line keeps its first
 * `maxChars` characters and is marked cut; the rest of it is dropped as it arrives.
 */
import type { Readable } from "node:stream";

/**
 * Call `onLine` with each line of `stream` (decoded as UTF-8, without its "\n"): its first
 * `maxChars` characters, and whether that is all of it. A last line without "\n" counts too.
 */
export function onBoundedLines(
  stream: Readable,
  maxChars: number,
  onLine: (line: string, whole: boolean) => void,
): void {
  let kept = "";
  let whole = true;
  const add = (piece: string) => {
    if (!whole) return;
    if (kept.length + piece.length <= maxChars) kept += piece;
    else {
      kept += piece.slice(0, maxChars - kept.length);
      whole = false;
    }
  };
  const end = () => {
    const line = kept;
    const wasWhole = whole;
    kept = "";
    whole = true;
    onLine(line, wasWhole);
  };
  stream.setEncoding("utf8");
  stream.on("data", (chunk: string) => {
    let start = 0;
    for (let newline = chunk.indexOf("\n"); newline !== -1; newline = chunk.indexOf("\n", start)) {
      add(chunk.slice(start, newline));
      end();
      start = newline + 1;
    }
    add(chunk.slice(start));
  });
  stream.on("end", () => {
    if (kept !== "") end();
  });
}
