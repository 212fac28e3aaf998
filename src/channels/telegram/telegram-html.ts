/**
 * Model markdown → Telegram HTML (the small tag set the Bot API accepts): the shared markdown walk
 * (channels/shared/markdown-walk.ts) with Telegram's primitives. Code blocks keep their language
 * class, quotes are not nested (and hold no `<pre>`), links with unsafe schemes keep only their
 * text. Also the reverse direction for the plain-text fallback when Telegram cannot parse what
 * we sent.
 */
import { decodeEntities } from "../shared/markdown-entities.js";
import { type MarkdownFormat, renderMarkdown } from "../shared/markdown-walk.js";

/** Escape text for Telegram HTML: only `&`, `<` and `>` are special in text. */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** Escape an attribute value (also `"`). */
export function escapeAttribute(text: string): string {
  return escapeHtml(text).replace(/"/g, "&quot;");
}

/** The text a reader sees for Telegram HTML: tags removed, entities decoded. */
export function htmlToPlainText(html: string): string {
  return decodeEntities(html.replace(/<[^>]*>/g, ""));
}

/**
 * The link schemes model text may use. Not `tg:`: a `tg://user?id=…` link is an inline mention
 * that notifies that person under any label, so it could ping anyone or pass for a real mention.
 */
const SAFE_LINK = /^(https?:|mailto:|ftp:)/i;

function wrap(tag: string, inner: string): string {
  return inner === "" ? "" : `<${tag}>${inner}</${tag}>`;
}

/** A `<pre>` block, with the language class Telegram highlights when there is one. */
export function preBlock(escaped: string, language = ""): string {
  return language === ""
    ? `<pre>${escaped}</pre>`
    : `<pre><code class="language-${language}">${escaped}</code></pre>`;
}

/** Telegram HTML's primitives for the shared markdown walk. */
const TELEGRAM_HTML: MarkdownFormat = {
  text: escapeHtml,
  escape: escapeHtml,
  htmlBlock: (html) => escapeHtml(html.trim()),
  strong: (inner) => wrap("b", inner),
  em: (inner) => wrap("i", inner),
  del: (inner) => wrap("s", inner),
  code: (text) => wrap("code", escapeHtml(text)),
  link: (href, label) => {
    const text = label || escapeHtml(href);
    return SAFE_LINK.test(href) ? `<a href="${escapeAttribute(href)}">${text}</a>` : text;
  },
  pre: (code, language, context) => {
    if (code === "") return "";
    // Telegram puts no <pre> inside a quote.
    return context.quoted ? `<code>${escapeHtml(code)}</code>` : preBlock(escapeHtml(code), language);
  },
  // Telegram does not nest blockquotes: an inner quote joins the outer one.
  quote: (blocks, context) => (context.quoted ? blocks.join("\n") : wrap("blockquote", blocks.join("\n"))),
  bullet: (depth) => (depth === 0 ? "•" : "◦"),
  listItem: (marker, body, depth) => `${"  ".repeat(depth)}${marker} ${body}`,
  listSeparator: () => "\n",
  tableCell: (tokens, inline) => htmlToPlainText(inline(tokens)),
  table: (aligned, context, source) => (context.quoted ? escapeHtml(source) : preBlock(escapeHtml(aligned))),
};

/** Convert model markdown to Telegram HTML (parse_mode "HTML"); blocks are separated by a blank line. */
export function markdownToTelegramHtml(markdown: string): string {
  return renderMarkdown(markdown, TELEGRAM_HTML).trim();
}
