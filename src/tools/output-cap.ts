/**
 * Output caps: long tool results are cut to a head and a tail with a marker saying how much was
 * left out, so the model sees the start (what happened) and the end (how it finished). Shared by
 * run_command, web_fetch, MCP results and anything else that can produce unbounded text.
 */
import { cutBeforeCharacter, cutBetweenCharacters } from "../core/surrogate-pairs.js";

/** Default cap for one tool result, in characters. */
export const DEFAULT_TOOL_OUTPUT_CHARS = 30_000;

/** The marker placed where text was left out. */
export function omissionMarker(omittedChars: number): string {
  return `\n… [${omittedChars} characters omitted] …\n`;
}

/**
 * Cut `text` to at most about `maxChars` characters: the first part and the last part with an
 * omission marker between them. `headShare` (0..1) is the fraction of the budget kept at the start.
 */
export function capOutput(
  text: string,
  maxChars: number = DEFAULT_TOOL_OUTPUT_CHARS,
  headShare = 0.5,
): string {
  if (text.length <= maxChars) return text;
  const headChars = Math.floor(maxChars * headShare);
  const head = text.slice(0, cutBeforeCharacter(text, headChars));
  const tail = text.slice(cutBetweenCharacters(text, text.length - (maxChars - headChars)));
  return head + omissionMarker(text.length - head.length - tail.length) + tail;
}

/**
 * Collects a stream of text while keeping only a bounded head and tail, so a command printing
 * gigabytes costs constant memory. `toString()` gives head + marker + tail (or everything when it fit).
 */
export class HeadTailBuffer {
  private head = "";
  private tail = "";
  private total = 0;

  /** Keep up to `headChars` from the start and `tailChars` from the end. */
  constructor(
    private readonly headChars: number,
    private readonly tailChars: number,
  ) {}

  /** Append a chunk. */
  push(chunk: string): void {
    let rest = chunk;
    if (this.head.length === this.total) {
      // nothing has gone past the head yet
      const end = cutBeforeCharacter(rest, this.headChars - this.head.length);
      this.head += rest.slice(0, end);
      rest = rest.slice(end);
    }
    this.total += chunk.length;
    if (rest.length === 0 || this.tailChars <= 0) return;
    const kept = this.tail + rest;
    const room = this.tailChars + this.headChars - this.head.length; // with what a head cut left unused
    this.tail = kept.slice(cutBetweenCharacters(kept, Math.max(0, kept.length - room)));
  }

  /** Characters received so far. */
  get receivedChars(): number {
    return this.total;
  }

  /** Whether anything was dropped. */
  get truncated(): boolean {
    return this.total > this.head.length + this.tail.length;
  }

  /** Head, omission marker and tail; the whole text when nothing was dropped. */
  toString(): string {
    if (!this.truncated) return this.head + this.tail;
    return this.head + omissionMarker(this.total - this.head.length - this.tail.length) + this.tail;
  }
}
