/**
 * Splits Telegram HTML into messages of at most 4,096 visible characters (Telegram counts the
 * text after entity parsing, in UTF-16 units). Cuts prefer paragraph / code-block boundaries,
 * then line ends, then spaces; a cut never falls inside a tag or an entity, and tags open at a
 * cut are closed at the end of one chunk and reopened at the start of the next, so every chunk
 * is balanced on its own and a code block stays a code block on both sides. The choice of cut is
 * the shared splitter's (channels/shared/split-text.ts); this file knows Telegram HTML: atoms,
 * what is visible, and the tags to reopen.
 */
import { decodeEntities } from "../shared/markdown-entities.js";
import { ANYWHERE, type SplitUnits, splitRanges } from "../shared/split-text.js";

/** Telegram's limit for a message text, after entity parsing. */
export const TELEGRAM_TEXT_LIMIT = 4096;

type Atom =
  | { readonly kind: "open"; readonly raw: string; readonly name: string }
  | { readonly kind: "close"; readonly raw: string; readonly name: string }
  | { readonly kind: "char"; readonly raw: string; readonly text: string };

const ATOM = /<(\/?)([a-zA-Z][\w-]*)[^>]*>|&(?:#x[0-9a-fA-F]+|#\d+|[a-zA-Z]+);|[\s\S]/gu;

function atomize(html: string): Atom[] {
  const atoms: Atom[] = [];
  for (const match of html.matchAll(ATOM)) {
    const raw = match[0];
    const name = match[2];
    if (name !== undefined) {
      atoms.push({ kind: match[1] === "/" ? "close" : "open", raw, name: name.toLowerCase() });
    } else {
      atoms.push({
        kind: "char",
        raw,
        text: raw.length > 1 && raw.startsWith("&") ? decodeEntities(raw) : raw,
      });
    }
  }
  return atoms;
}

type OpenTag = { readonly raw: string; readonly name: string };

function advanceStack(stack: readonly OpenTag[], atom: Atom): OpenTag[] {
  if (atom.kind === "open") return [...stack, { raw: atom.raw, name: atom.name }];
  if (atom.kind === "close") {
    const index = stack.map((tag) => tag.name).lastIndexOf(atom.name);
    return index === -1 ? [...stack] : stack.slice(0, index);
  }
  return stack as OpenTag[];
}

/** Cut ranks, best first (see split-text.ts): paragraph (blank line outside any tag), line end, space. */
const PARAGRAPH = 0;
const LINE = 1;
const SPACE = 2;

/** The tag depth before each atom (open tags count up, closing ones down). */
function depths(atoms: readonly Atom[]): Int32Array {
  const depth = new Int32Array(atoms.length);
  let current = 0;
  atoms.forEach((atom, index) => {
    depth[index] = current;
    if (atom.kind === "open") current += 1;
    else if (atom.kind === "close") current -= 1;
  });
  return depth;
}

/** The atoms as the shared splitter sees them: visible length, and where a cut is best. */
function splitUnits(atoms: readonly Atom[]): SplitUnits {
  const depth = depths(atoms);
  return {
    length: atoms.length,
    size: (index) => {
      const atom = atoms[index]!;
      return atom.kind === "char" ? atom.text.length : 0;
    },
    rank: (index) => {
      const atom = atoms[index]!;
      if (atom.kind !== "char") return ANYWHERE;
      if (atom.text === "\n") {
        const next = atoms[index + 1];
        return depth[index] === 0 && next?.kind === "char" && next.text === "\n" ? PARAGRAPH : LINE;
      }
      return isBlank(atom) ? SPACE : ANYWHERE;
    },
  };
}

function isBlank(atom: Atom): boolean {
  return atom.kind === "char" && /^\s$/.test(atom.text);
}

const EMPTY_PAIR = /<([a-zA-Z][\w-]*)(?:\s[^>]*)?><\/\1>/g;

function dropEmptyPairs(html: string): string {
  let previous = "";
  let current = html;
  while (current !== previous) {
    previous = current;
    current = current.replace(EMPTY_PAIR, "");
  }
  return current;
}

/**
 * Split Telegram HTML into chunks of at most `limit` visible characters each, in order.
 * Whitespace at a cut is dropped; no other text is lost. Returns [] for blank input.
 */
export function splitTelegramHtml(html: string, limit = TELEGRAM_TEXT_LIMIT): string[] {
  // Text without tags that fits whole (most short answers) is its own only chunk.
  if (html.length <= limit && !html.includes("<")) {
    const chunk = html.trim();
    return chunk === "" ? [] : [chunk];
  }
  const atoms = atomize(html);
  const ranges = splitRanges(splitUnits(atoms), {
    room: () => ({ whole: limit, cut: limit }),
    minFill: (room) => room / 2,
    resume: (cut) => {
      let start = cut;
      while (start < atoms.length && isBlank(atoms[start]!)) start++;
      return start;
    },
  });
  const chunks: string[] = [];
  let stack: OpenTag[] = [];
  for (const { start, end } of ranges) {
    const opened = stack;
    let body = "";
    for (let index = start; index < end; index++) {
      body += atoms[index]!.raw;
      stack = advanceStack(stack, atoms[index]!);
    }
    const closing = [...stack]
      .reverse()
      .map((tag) => `</${tag.name}>`)
      .join("");
    const chunk = dropEmptyPairs(opened.map((tag) => tag.raw).join("") + body + closing).trim();
    if (chunk !== "") chunks.push(chunk);
  }
  return chunks;
}
