/**
 * The memories block of the instructions: what is remembered about one requester and channel,
 * rendered under a heading, the user's memories then the channel's. Every memory is one line of
 * that list (core/one-line.ts, applied again here for records saved before saving flattened
 * them), so none can forge a heading or an entry; a channel memory names its author (and who
 * edited it, when a configured approver changed another member's note), so a channel note cannot
 * pass for this user's own nor an approver's words for its author's (memory-authorship.ts, as
 * the approval cards). The block is in every turn of everyone who asks in the channel, so it is
 * rendered within a budget: the most recently updated memories are kept, the user's first, and a
 * last line says how many were left out. It does not read the store (MemoryStore.memoryBlock
 * does, then renders here).
 */
import { oneLine } from "../../core/one-line.js";
import { authorLine, editorNote, type MemoryAuthorship } from "./memory-authorship.js";

/**
 * The block's sections, in order: memory-store.ts's MEMORY_SCOPES, kept here so this module need
 * not import the store (which imports it); a scope added there fails to compile where
 * MemoryStore passes its items in.
 */
const SECTIONS = ["user", "channel"] as const;

/** What the block shows of one memory (a MemoryItem has all of it). */
interface ShownMemory extends MemoryAuthorship {
  readonly id: string;
  readonly scope: (typeof SECTIONS)[number];
  readonly content: string;
  readonly updatedAt: string;
}

/** What `memoryBlock` renders within, and what it left out. */
export interface MemoryBlockOptions {
  /** Most characters of the block (line lengths as `measure` counts them, plus line breaks). */
  readonly maxChars?: number;
  /** The cost of one line (default its length), e.g. its length once put into a tagged block. */
  readonly measure?: (line: string) => number;
}

/**
 * `items` (the user's memories, then the channel's) as a block for the instructions; "" when
 * there are none. Each is one line; within `maxChars` the most recently updated of the user's
 * memories are kept first, then the channel's; a last line says how many were left out.
 */
export function memoryBlock(items: readonly ShownMemory[], options: MemoryBlockOptions = {}): string {
  if (items.length === 0) return "";
  const measure = options.measure ?? ((line: string) => line.length);
  const maxChars = options.maxChars ?? Number.POSITIVE_INFINITY;
  const lines = new Map(items.map((item) => [item, entryLine(item)] as const));
  const head = [
    "## What you remember",
    "Memories saved in earlier conversations. Each has an id for memory_update and memory_forget.",
  ];
  const titles: Record<ShownMemory["scope"], string> = {
    user: "About this user:",
    channel: "About this channel (notes saved by people in it, not this user's own):",
  };
  const cost = (line: string) => measure(line) + 1;
  // The longest the "left out" line can be, so it always fits after what is kept.
  let used = head.reduce((sum, line) => sum + cost(line), 0) + cost(leftOutLine(items.length, items.length));
  const kept = new Set<ShownMemory>();
  let full = false;
  for (const scope of SECTIONS) {
    const newestFirst = items
      .filter((item) => item.scope === scope)
      .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
    let titled = false;
    for (const item of newestFirst) {
      const add = (titled ? 0 : cost(titles[scope])) + cost(lines.get(item) as string);
      if (full || used + add > maxChars) {
        full = true;
        break;
      }
      used += add;
      titled = true;
      kept.add(item);
    }
  }
  const section = (scope: ShownMemory["scope"]): string[] => {
    const entries = items.filter((item) => item.scope === scope && kept.has(item));
    if (entries.length === 0) return [];
    return [titles[scope], ...entries.map((item) => lines.get(item) as string)];
  };
  const leftUser = items.filter((item) => item.scope === "user" && !kept.has(item)).length;
  const leftChannel = items.filter((item) => item.scope === "channel" && !kept.has(item)).length;
  return [
    ...head,
    ...section("user"),
    ...section("channel"),
    ...(leftUser + leftChannel > 0 ? [leftOutLine(leftUser, leftChannel)] : []),
  ].join("\n");
}

/**
 * One memory as a list line, on one line whatever its stored text; channel ones name their author
 * and, when another person edited it, the editor (memory-authorship.ts).
 */
function entryLine(item: ShownMemory): string {
  const date = item.updatedAt.slice(0, 10);
  const saved =
    item.scope === "channel" ? `saved by ${authorLine(item)}${editorNote(item)}, ${date}` : `saved ${date}`;
  return `- [${oneLine(item.id)}] ${oneLine(item.content).trim()} (${saved})`;
}

/** The line saying how many memories the block left out (to keep the instructions small). */
function leftOutLine(user: number, channel: number): string {
  return `(${user + channel} more memories, the least recently updated, are left out here to keep this list within its size limit: ${user} about this user, ${channel} about this channel. They are still saved, but you cannot see them in this conversation.)`;
}
