/**
 * Splits Telegram HTML into messages of at most 4,096 visible characters (Telegram counts the
 * text after entity parsing, in UTF-16 units). Cuts prefer paragraph / code-block boundaries,
 * then line ends, then spaces; a cut never falls inside a tag or an entity, and tags open at a
 * cut are closed at the end of one chunk and reopened at the start of the next, so every chunk
 * is balanced on its own and a code block stays a code block on both sides.
 */
import { decodeEntities } from "../shared/markdown-entities.js";

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

/** Break classes, best first: paragraph (blank line outside any tag), line end, space. */
const PARAGRAPH = 3;
const LINE = 2;
const SPACE = 1;

interface Candidate {
  readonly index: number;
  readonly length: number;
}

function breakClass(atoms: readonly Atom[], index: number, depth: number): number {
  const atom = atoms[index];
  if (atom?.kind !== "char") return 0;
  if (atom.text === "\n") {
    const next = atoms[index + 1];
    return depth === 0 && next?.kind === "char" && next.text === "\n" ? PARAGRAPH : LINE;
  }
  return isBlank(atom) ? SPACE : 0;
}

/** Where to cut the chunk that starts at `start`: the atom index the chunk ends before. */
function findCut(atoms: readonly Atom[], start: number, startDepth: number, limit: number): number {
  const best: (Candidate | undefined)[] = [];
  let length = 0;
  let depth = startDepth;
  for (let index = start; index < atoms.length; index++) {
    const atom = atoms[index]!;
    if (atom.kind === "char") {
      const kind = breakClass(atoms, index, depth);
      if (kind > 0 && length > 0) best[kind] = { index, length };
      if (length + atom.text.length > limit) {
        for (const kind of [PARAGRAPH, LINE, SPACE]) {
          const candidate = best[kind];
          if (candidate && candidate.length >= limit / 2) return candidate.index;
        }
        const fallback = best[PARAGRAPH] ?? best[LINE] ?? best[SPACE];
        return fallback ? fallback.index : Math.max(index, start + 1);
      }
      length += atom.text.length;
    } else {
      depth += atom.kind === "open" ? 1 : -1;
    }
  }
  return atoms.length;
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
  const atoms = atomize(html);
  const chunks: string[] = [];
  let stack: OpenTag[] = [];
  let start = 0;
  while (start < atoms.length) {
    const opened = stack;
    const cut = findCut(atoms, start, opened.length, limit);
    let body = "";
    for (let index = start; index < cut; index++) {
      body += atoms[index]!.raw;
      stack = advanceStack(stack, atoms[index]!);
    }
    const closing = [...stack]
      .reverse()
      .map((tag) => `</${tag.name}>`)
      .join("");
    const chunk = dropEmptyPairs(opened.map((tag) => tag.raw).join("") + body + closing).trim();
    if (chunk !== "") chunks.push(chunk);
    start = cut;
    while (start < atoms.length && isBlank(atoms[start]!)) start++;
  }
  return chunks;
}
