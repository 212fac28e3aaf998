/**
 * The console channel's output stream wrapper: writes text, knows whether the cursor is at the
 * start of a line (so status lines never glue onto streamed text), and styles with ANSI colours
 * only when asked to (a TTY without NO_COLOR).
 */
import type { Writable } from "node:stream";

type StyleName = "dim" | "bold" | "green" | "red" | "yellow" | "cyan";

const CODES: Readonly<Record<StyleName, readonly [number, number]>> = {
  dim: [2, 22],
  bold: [1, 22],
  green: [32, 39],
  red: [31, 39],
  yellow: [33, 39],
  cyan: [36, 39],
};

/** Line-aware, optionally coloured writer over an output stream. */
export class TerminalWriter {
  private atLineStart = true;

  constructor(
    private readonly out: Writable,
    private readonly color: boolean,
  ) {}

  /** Wrap `text` in an ANSI style when colour is on. */
  style(name: StyleName, text: string): string {
    if (!this.color) return text;
    const [open, close] = CODES[name];
    return `\u001b[${open}m${text}\u001b[${close}m`;
  }

  /** Write raw text (streamed assistant output). */
  write(text: string): void {
    if (text === "") return;
    this.out.write(text);
    this.atLineStart = text.endsWith("\n");
  }

  /** End the current line if something is on it. */
  breakLine(): void {
    if (!this.atLineStart) this.write("\n");
  }

  /** Write `text` as whole line(s), starting on a fresh line. */
  line(text: string): void {
    this.breakLine();
    this.write(`${text}\n`);
  }
}
