/**
 * Channel content formatting: how messages written by other people in a watched channel are
 * shown to the model — one line per message with time and author, inside a code fence longer
 * than any backtick run in the text (so no message can close the fence and pose as something
 * else), and a short quote of a message for approval cards.
 */
import { clipLine } from "../core/one-line.js";
import { formatTime } from "../core/time-text.js";
import type { BufferEntryInput } from "./buffer-entry.js";
import { displayName } from "./platform-directory.js";

/** Characters of the triggering text kept in the provenance quote. */
export const QUOTE_CHARS = 200;

/** One message as a line (continuation lines indented): time, author, where, text. */
export function formatMessage(entry: BufferEntryInput): string {
  const who = `${displayName(entry.author.name) || entry.author.id}${entry.author.isBot ? " (bot)" : ""}`;
  const where = entry.thread === undefined ? "" : ` [thread ${entry.thread}]`;
  const text = entry.text.trim() === "" ? "(no text)" : entry.text.replace(/\r\n?/g, "\n");
  return `[${formatTime(entry.at)}] ${who}${where}: ${text.split("\n").join("\n    ")}`;
}

/** The messages inside a fence no message text can close. */
export function fencedMessages(entries: readonly BufferEntryInput[]): string {
  const body = entries.map(formatMessage).join("\n");
  // A loop, not Math.max(...runs): a backlog of backtick-filled messages holds too many runs to spread.
  let longestRun = 0;
  for (const run of body.matchAll(/`+/g)) longestRun = Math.max(longestRun, run[0].length);
  const fence = "`".repeat(Math.max(3, longestRun + 1));
  return `${fence}text\n${body}\n${fence}`;
}

/** The first ~200 characters of a message, whitespace collapsed, for "triggered by" quotes. */
export function quoteOf(text: string): string {
  return clipLine(text, QUOTE_CHARS);
}
