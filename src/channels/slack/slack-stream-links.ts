/**
 * StreamedLinks: the links of model markdown that goes to Slack unconverted (a native stream's
 * `markdown_text`, which Slack renders itself), checked as the walk checks them for every other
 * rendition: a link whose text passes for another address (link-label.ts) becomes that text,
 * unlinked, with the real target after it in brackets. The stream's pieces may split a link
 * anywhere, so text from a `[` that may still open a link is held back until the link is whole
 * or cannot be one (a blank line, or more than MAX_LINK characters), and given out at the end.
 */
import { labelPosesAsOtherHost } from "../shared/link-label.js";

/** The most text one link may take (longer, it is taken for none): also what is held back for it. */
const MAX_LINK = 1_000;

/** What starts at a `[`: a whole inline link, no link, or text that may still become one. */
type Scan =
  | { readonly kind: "link"; readonly end: number; readonly label: string; readonly href: string }
  | { readonly kind: "none" }
  | { readonly kind: "open" };

/** Where the bracket opened at `start` closes, or why it does not (yet). */
function closingBracket(text: string, start: number): number | "none" | "open" {
  let depth = 0;
  const end = Math.min(text.length, start + MAX_LINK);
  for (let i = start; i < end; i++) {
    const char = text[i];
    if (char === "\\") i++;
    else if (char === "[") depth++;
    else if (char === "]" && --depth === 0) return i;
    else if (char === "\n" && text[i + 1] === "\n") return "none";
  }
  return end < text.length ? "none" : "open";
}

/** The destination starting after `(` at `start`: where its `)` is, or why there is none (yet). */
function closingParen(text: string, start: number, limit: number): number | "none" | "open" {
  let depth = 0;
  const end = Math.min(text.length, limit);
  for (let i = start; i < end; i++) {
    const char = text[i];
    if (char === "\\") i++;
    else if (char === "\n") return "none";
    else if (char === "(") depth++;
    else if (char === ")" && depth-- === 0) return i;
  }
  return end < text.length ? "none" : "open";
}

/** The inline link starting at the `[` at `start` of `text`, if any (see Scan). */
function scanLink(text: string, start: number): Scan {
  const bracket = closingBracket(text, start);
  if (bracket === "none") return { kind: "none" };
  if (bracket === "open" || bracket + 1 >= text.length) return { kind: "open" };
  if (text[bracket + 1] !== "(") return { kind: "none" };
  const paren = closingParen(text, bracket + 2, start + MAX_LINK);
  if (paren === "none") return { kind: "none" };
  if (paren === "open") return { kind: "open" };
  const destination = text.slice(bracket + 2, paren).trim();
  const href = destination.startsWith("<") ? destination.slice(1).split(">")[0] : destination.split(/\s/)[0];
  return { kind: "link", end: paren + 1, label: text.slice(start + 1, bracket), href: href ?? "" };
}

/** A link's label as a reader sees it: without emphasis and code markers or backslash escapes. */
function labelText(label: string): string {
  return label.replace(/\\(.)/g, "$1").replace(/[*_~`]/g, "");
}

/** Text with its spoofing links rewritten, up to where a link may still be open. */
function rewrite(text: string): { readonly out: string; readonly held: string } {
  let out = "";
  let from = 0;
  for (let i = text.indexOf("["); i >= 0; i = text.indexOf("[", i)) {
    if (text[i - 1] === "\\") {
      i++;
      continue;
    }
    const scan = scanLink(text, i);
    if (scan.kind === "open") return { out: out + text.slice(from, i), held: text.slice(i) };
    if (scan.kind !== "link") {
      i++;
      continue;
    }
    if (labelPosesAsOtherHost(labelText(scan.label), scan.href))
      out += `${text.slice(from, i)}${scan.label} (${scan.href})`;
    else out += text.slice(from, scan.end);
    from = scan.end;
    i = scan.end;
  }
  return { out: out + text.slice(from), held: "" };
}

/** One stream's text, piece by piece (see the module header). */
export class StreamedLinks {
  private held = "";

  /** The text that can go out now, of what was held and `piece`. */
  push(piece: string): string {
    const { out, held } = rewrite(this.held + piece);
    this.held = held;
    return out;
  }

  /** The text still held back, now that nothing more follows it. */
  end(): string {
    const rest = this.held;
    this.held = "";
    if (rest === "") return "";
    const { out, held } = rewrite(rest);
    // What was held as an open link is no link: its `[` goes out as text, and the rest is checked.
    return held === "" ? out : `${out}${held[0]}${this.push(held.slice(1))}${this.end()}`;
  }
}
