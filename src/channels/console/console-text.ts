/**
 * Markdown → terminal text: the shared markdown walk (channels/shared/markdown-walk.ts) with plain
 * primitives, for the console's command replies, notices and card text. Those are markdown, and
 * what people and the model wrote goes into them backslash-escaped (core/person-text.ts
 * markdownLiteral) so no platform formats it; printed as they are, a terminal showed `\*` and
 * `\[`. Here an escape is its character, emphasis is its text, a link its text and address, code
 * and tables stay monospace source, and character references are resolved.
 */
import { decodeEntities } from "../shared/markdown-entities.js";
import { type MarkdownFormat, renderMarkdown } from "../shared/markdown-walk.js";

const text = (source: string): string => decodeEntities(source);

/** Plain-text primitives for the shared markdown walk. */
const TERMINAL_TEXT: MarkdownFormat = {
  text,
  escape: (literal) => literal,
  htmlBlock: (html) => html.trim(),
  strong: (inner) => inner,
  em: (inner) => inner,
  del: (inner) => inner,
  code: (source) => `\`${text(source)}\``,
  link: (href, label) => (label === "" || label === href ? href : `${label} (${href})`),
  pre: (code) => (code === "" ? "" : ["```", code, "```"].join("\n")),
  quote: (blocks) =>
    blocks
      .join("\n")
      .split("\n")
      .map((line) => `> ${line}`)
      .join("\n"),
  bullet: (depth) => (depth === 0 ? "•" : "◦"),
  listItem: (marker, body, depth) => `${"  ".repeat(depth)}${marker} ${body}`,
  listSeparator: () => "\n",
  tableCell: (tokens, inline) => inline(tokens),
  table: (aligned) => aligned,
};

/** Markdown as the terminal shows it: its text, without markdown's escapes and markers. */
export function markdownToTerminalText(markdown: string): string {
  return renderMarkdown(markdown, TERMINAL_TEXT).trim();
}
