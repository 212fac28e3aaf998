/**
 * Model markdown → Telegram HTML (the small tag set the Bot API accepts), built on the `marked`
 * lexer so parsing follows CommonMark + GFM. Headings become bold lines, lists become bullet or
 * numbered lines, tables become a monospaced block, raw HTML is shown as text. Also the reverse
 * direction for the plain-text fallback when Telegram cannot parse what we sent.
 */
import { Lexer, type MarkedToken, type Token, type Tokens } from "marked";

/** Escape text for Telegram HTML: only `&`, `<` and `>` are special in text. */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** Escape an attribute value (also `"`). */
export function escapeAttribute(text: string): string {
  return escapeHtml(text).replace(/"/g, "&quot;");
}

const NAMED_ENTITIES: Readonly<Record<string, string>> = { lt: "<", gt: ">", amp: "&", quot: '"' };

/** Decode the entities Telegram understands (named lt/gt/amp/quot and numeric ones). */
export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, body: string) => {
    if (body.startsWith("#")) {
      const code =
        body[1] === "x" || body[1] === "X" ? Number.parseInt(body.slice(2), 16) : Number(body.slice(1));
      return Number.isInteger(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return NAMED_ENTITIES[body.toLowerCase()] ?? whole;
  });
}

/** The text a reader sees for Telegram HTML: tags removed, entities decoded. */
export function htmlToPlainText(html: string): string {
  return decodeEntities(html.replace(/<[^>]*>/g, ""));
}

const SAFE_LINK = /^(https?:|tg:|mailto:|ftp:)/i;

function wrap(tag: string, inner: string): string {
  return inner === "" ? "" : `<${tag}>${inner}</${tag}>`;
}

function inline(tokens: readonly Token[] | undefined): string {
  return (tokens ?? []).map((token) => inlineToken(token as MarkedToken)).join("");
}

function inlineToken(token: MarkedToken): string {
  switch (token.type) {
    case "text":
      return token.tokens ? inline(token.tokens) : escapeHtml(token.text);
    case "escape":
      return escapeHtml(token.text);
    case "strong":
      return wrap("b", inline(token.tokens));
    case "em":
      return wrap("i", inline(token.tokens));
    case "del":
      return wrap("s", inline(token.tokens));
    case "codespan":
      return token.text === "" ? "" : `<code>${escapeHtml(token.text)}</code>`;
    case "br":
      return "\n";
    case "link": {
      const text = inline(token.tokens) || escapeHtml(token.href);
      return SAFE_LINK.test(token.href) ? `<a href="${escapeAttribute(token.href)}">${text}</a>` : text;
    }
    case "image": {
      const label = escapeHtml(token.text || "image");
      return SAFE_LINK.test(token.href) ? `<a href="${escapeAttribute(token.href)}">${label}</a>` : label;
    }
    default:
      return escapeHtml("text" in token && typeof token.text === "string" ? token.text : token.raw);
  }
}

interface BlockContext {
  /** Inside a blockquote: Telegram does not nest blockquotes, and pre stays out of quotes. */
  readonly quoted: boolean;
  readonly listDepth: number;
}

function codeBlock(token: Tokens.Code, context: BlockContext): string {
  const text = token.text.replace(/\n+$/, "");
  if (text === "") return "";
  if (context.quoted) return `<code>${escapeHtml(text)}</code>`;
  const language =
    (token.lang ?? "")
      .trim()
      .split(/\s+/)[0]
      ?.replace(/[^\w+#.-]/g, "") ?? "";
  return language === ""
    ? `<pre>${escapeHtml(text)}</pre>`
    : `<pre><code class="language-${language}">${escapeHtml(text)}</code></pre>`;
}

function listBlock(token: Tokens.List, context: BlockContext): string {
  const indent = "  ".repeat(context.listDepth);
  const start = typeof token.start === "number" ? token.start : 1;
  return token.items
    .map((item, index) => {
      const bullet = token.ordered ? `${start + index}.` : context.listDepth === 0 ? "•" : "◦";
      const box = item.task ? (item.checked ? "☑ " : "☐ ") : "";
      const inner = blocks(
        item.tokens.filter((child) => child.type !== "checkbox"),
        { ...context, listDepth: context.listDepth + 1 },
        "\n",
      );
      return `${indent}${bullet} ${box}${inner}`;
    })
    .join("\n");
}

function tableBlock(token: Tokens.Table): string {
  const rows = [token.header, ...token.rows].map((row) =>
    row.map((cell) => htmlToPlainText(inline(cell.tokens))),
  );
  const widths = token.header.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? "").length)));
  const line = (row: readonly string[]) =>
    row
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join(" | ")
      .trimEnd();
  const separator = widths.map((width) => "-".repeat(Math.max(width, 1))).join("-+-");
  const [header, ...body] = rows;
  return `<pre>${escapeHtml([line(header ?? []), separator, ...body.map(line)].join("\n"))}</pre>`;
}

function block(token: MarkedToken, context: BlockContext): string {
  switch (token.type) {
    case "space":
    case "def":
    case "checkbox":
      return "";
    case "heading":
      return wrap("b", inline(token.tokens));
    case "paragraph":
      return inline(token.tokens);
    case "text":
      return token.tokens ? inline(token.tokens) : escapeHtml(token.text);
    case "code":
      return codeBlock(token, context);
    case "blockquote": {
      const inner = blocks(token.tokens, { ...context, quoted: true }, "\n");
      return context.quoted ? inner : wrap("blockquote", inner);
    }
    case "list":
      return listBlock(token, context);
    case "table":
      return context.quoted ? escapeHtml(token.raw.trim()) : tableBlock(token);
    case "hr":
      return "──────────";
    case "html":
      return escapeHtml(token.text.trim());
    default:
      return inlineToken(token);
  }
}

function blocks(tokens: readonly Token[], context: BlockContext, separator: string): string {
  return tokens
    .map((token) => block(token as MarkedToken, context))
    .filter((html) => html !== "")
    .join(separator);
}

/** Convert model markdown to Telegram HTML (parse_mode "HTML"); blocks are separated by a blank line. */
export function markdownToTelegramHtml(markdown: string): string {
  const tokens = new Lexer({ gfm: true }).lex(markdown);
  return blocks(tokens, { quoted: false, listDepth: 0 }, "\n\n").trim();
}
