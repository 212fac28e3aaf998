/**
 * Model markdown → Slack mrkdwn, walking the token tree of the `marked` lexer (a maintained
 * CommonMark/GFM parser) instead of rewriting text with regular expressions.
 *
 * Mapping: headings → bold line · **bold** → *bold* · *em* → _em_ · ~~del~~ → ~del~ ·
 * `code` stays · fenced / indented code → ``` block (language dropped: Slack shows it as text) ·
 * [text](url) → <url|text> · lists → • / 1. with nesting and ☐ / ☑ task boxes · quotes → "> " ·
 * tables → an aligned monospace block · hr → a rule · raw HTML → shown as text.
 * `&`, `<` and `>` are escaped everywhere (also inside code, as Slack requires).
 */
import { Lexer, type Token, type Tokens } from "marked";
import { escapeMrkdwn, truncate } from "./slack-limits.js";

const NAMED_ENTITIES: Readonly<Record<string, string>> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: "\u00a0",
};

/** Resolve the HTML character references markdown allows in text (`&amp;`, `&#39;`, `&#x1F600;`). */
function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]+);/gi, (whole, ref: string) => {
    if (ref.startsWith("#")) {
      const code =
        ref[1] === "x" || ref[1] === "X" ? Number.parseInt(ref.slice(2), 16) : Number(ref.slice(1));
      return Number.isInteger(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return NAMED_ENTITIES[ref.toLowerCase()] ?? whole;
  });
}

const SAFE_URL = /^(https?:|mailto:|slack:|tel:)/i;

function link(href: string, label: string): string {
  const url = href.trim();
  if (!SAFE_URL.test(url)) return label.length > 0 ? `${label} (${escapeMrkdwn(url)})` : escapeMrkdwn(url);
  // `|` and `>` end the link syntax; Slack accepts them percent-encoded in the URL.
  const target = escapeMrkdwn(url.replace(/\|/g, "%7C"));
  const plainLabel = label.replace(/\|/g, "¦");
  if (plainLabel.length === 0 || plainLabel === escapeMrkdwn(url)) return `<${target}>`;
  return `<${target}|${plainLabel}>`;
}

/** Slack cannot escape backticks: a zero-width space keeps ``` inside code from ending the block. */
function defuseFences(code: string): string {
  return code.replace(/```/g, "``\u200b`");
}

function fence(code: string): string {
  const body = escapeMrkdwn(defuseFences(code.replace(/\n+$/, "")));
  return "```\n" + body + "\n```";
}

/** Render inline tokens. */
function inline(tokens: readonly Token[] | undefined): string {
  if (!tokens) return "";
  return tokens.map(inlineToken).join("");
}

function inlineToken(token: Token): string {
  const t = token as Tokens.Generic;
  switch (t.type) {
    case "text":
      return t.tokens ? inline(t.tokens) : escapeMrkdwn(decodeEntities(t.text as string));
    case "escape":
      return escapeMrkdwn(t.text as string);
    case "strong":
      return wrap("*", inline(t.tokens));
    case "em":
      return wrap("_", inline(t.tokens));
    case "del":
      return wrap("~", inline(t.tokens));
    case "codespan":
      return "`" + escapeMrkdwn(defuseFences(decodeEntities(t.text as string))) + "`";
    case "br":
      return "\n";
    case "link":
      return link(t.href as string, inline(t.tokens));
    case "image":
      return link(t.href as string, escapeMrkdwn(decodeEntities((t.text as string) || "image")));
    case "html":
      return escapeMrkdwn(t.text as string);
    case "checkbox":
      return t.checked ? "☑ " : "☐ ";
    default:
      return escapeMrkdwn(typeof t.raw === "string" ? t.raw : "");
  }
}

/** Wrap formatted text, keeping surrounding whitespace outside the markers (Slack needs that). */
function wrap(marker: string, text: string): string {
  const match = /^(\s*)([\s\S]*?)(\s*)$/.exec(text);
  if (!match || match[2] === "") return text;
  return `${match[1]}${marker}${match[2]}${marker}${match[3]}`;
}

/** Render block tokens, separated by blank lines. */
function blocks(tokens: readonly Token[], depth: number): string {
  const parts: string[] = [];
  for (const token of tokens) {
    const rendered = block(token, depth);
    if (rendered.length > 0) parts.push(rendered);
  }
  return parts.join("\n\n");
}

function block(token: Token, depth: number): string {
  const t = token as Tokens.Generic;
  switch (t.type) {
    case "space":
    case "def":
      return "";
    case "heading":
      return wrap("*", inline(t.tokens));
    case "paragraph":
      return inline(t.tokens);
    case "text":
      return inline(t.tokens ?? [t as Token]);
    case "code":
      return fence(t.text as string);
    case "blockquote":
      return blocks(t.tokens ?? [], depth)
        .split("\n")
        .map((line) => (line.length > 0 ? `> ${line}` : ">"))
        .join("\n");
    case "list":
      return list(t as Tokens.List, depth);
    case "table":
      return table(t as Tokens.Table);
    case "hr":
      return "──────────";
    case "html":
      return escapeMrkdwn((t.text as string).replace(/\n+$/, ""));
    default:
      return escapeMrkdwn(typeof t.raw === "string" ? t.raw.trimEnd() : "");
  }
}

const BULLETS = ["•", "◦", "▪"];

function list(token: Tokens.List, depth: number): string {
  const indent = "    ".repeat(depth);
  const start = typeof token.start === "number" ? token.start : 1;
  const lines = token.items.map((item, index) => {
    const marker = token.ordered ? `${start + index}.` : (BULLETS[depth % BULLETS.length] as string);
    const [first = "", ...rest] = listItemBody(item, depth).split("\n");
    const continuation = rest.map((line) =>
      line.length > 0 && !line.startsWith(indent) ? `${indent}  ${line}` : line,
    );
    return [`${indent}${marker} ${first}`, ...continuation].join("\n");
  });
  return lines.join(token.loose ? "\n\n" : "\n");
}

function listItemBody(item: Tokens.ListItem, depth: number): string {
  const parts: string[] = [];
  let prefix = "";
  for (const child of item.tokens) {
    if (child.type === "checkbox") {
      prefix = (child as Tokens.Checkbox).checked ? "☑ " : "☐ ";
      continue;
    }
    const rendered = child.type === "list" ? list(child as Tokens.List, depth + 1) : block(child, depth);
    if (rendered.length > 0) parts.push(rendered);
  }
  if (item.task && prefix === "") prefix = item.checked ? "☑ " : "☐ ";
  return prefix + parts.join("\n");
}

/** Tables have no mrkdwn form: render them as an aligned monospace block. */
function table(token: Tokens.Table): string {
  const cell = (c: Tokens.TableCell) => decodeEntities(plainText(c.tokens)).replace(/\n/g, " ");
  const rows = [token.header.map(cell), ...token.rows.map((row) => row.map(cell))];
  const widths = token.header.map((_, col) => Math.max(...rows.map((row) => (row[col] ?? "").length)));
  const line = (row: string[]) =>
    row
      .map((value, col) => value.padEnd(widths[col] ?? 0))
      .join(" | ")
      .trimEnd();
  const rule = widths.map((w) => "-".repeat(Math.max(w, 1))).join("-+-");
  return fence([line(rows[0] ?? []), rule, ...rows.slice(1).map(line)].join("\n"));
}

/** The text of inline tokens without any formatting (for table cells). */
function plainText(tokens: readonly Token[] | undefined): string {
  if (!tokens) return "";
  return tokens
    .map((token) => {
      const t = token as Tokens.Generic;
      if (t.tokens) return plainText(t.tokens);
      if (t.type === "br") return " ";
      return typeof t.text === "string" ? t.text : "";
    })
    .join("");
}

/** Convert model markdown to Slack mrkdwn. */
export function markdownToMrkdwn(markdown: string): string {
  if (markdown.trim().length === 0) return "";
  const tokens = new Lexer({ gfm: true }).lex(markdown);
  return blocks(tokens, 0);
}

/** A one-line mrkdwn preview (notification text of a message): converted, whitespace folded, cut. */
export function markdownPreview(markdown: string, max: number): string {
  return truncate(markdownToMrkdwn(markdown).replace(/\s+/g, " ").trim(), max);
}
