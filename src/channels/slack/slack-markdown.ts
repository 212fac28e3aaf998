/**
 * Model markdown → Slack mrkdwn: the shared markdown walk (channels/shared/markdown-walk.ts) with
 * Slack's primitives. Headings → bold line · **bold** → *bold* · *em* → _em_ · ~~del~~ → ~del~ ·
 * `code` stays · fenced / indented code → ``` block (language dropped: Slack shows it as text) ·
 * [text](url) → <url|text> · lists → • / 1. with nesting, continuation lines indented · quotes →
 * "> " · tables → an aligned monospace block. `&`, `<` and `>` are escaped everywhere (also inside
 * code, as Slack requires); character references in the markdown are resolved first. mrkdwn has
 * no escape for its markers `*`, `_`, `~` and `` ` ``, so a literal one (a backslash escape, as
 * markdownLiteral writes names and other text meant as it is) goes between zero-width spaces where
 * it could open or close a span; between letters or digits (`deploy_prod`) it stays bare, so text
 * copied out of Slack has no invisible characters there.
 */
import { trimTrailing } from "../../core/trim-trailing.js";
import { BASIC_ENTITIES, decodeEntities } from "../shared/markdown-entities.js";
import {
  type MarkdownFormat,
  plainText,
  type RenderBudget,
  renderMarkdown,
} from "../shared/markdown-walk.js";
import { escapeMrkdwn } from "./slack-limits.js";

const NAMED_ENTITIES: Readonly<Record<string, string>> = { ...BASIC_ENTITIES, apos: "'", nbsp: "\u00a0" };

const SAFE_URL = /^(https?:|mailto:|slack:|tel:)/i;
const ZERO_WIDTH_SPACE = "\u200b";
/** mrkdwn's emphasis and code markers. */
const MARKERS = /[*_~`]/g;
/**
 * A marker `literal` put between zero-width spaces with a letter or digit on each side. mrkdwn
 * opens a span only at a marker after the start, a space or punctuation, and closes one only at a
 * marker before the end, a space or punctuation, so this one can do neither and needs no spaces.
 */
const MARKER_INSIDE_WORD = /(?<=[\p{L}\p{M}\p{N}])\u200b([*_~`])\u200b(?=[\p{L}\p{M}\p{N}])/gu;
const BULLETS = ["•", "◦", "▪"];
const INDENT = "    ";

function source(text: string): string {
  return escapeMrkdwn(decodeEntities(text, NAMED_ENTITIES));
}

/**
 * Literal characters (a backslash escape, inline raw HTML) as Slack shows them: `&<>` escaped, and
 * each marker between zero-width spaces, so neither side of it can open or close a span (whether
 * Slack reads the space as a letter or as a space) and it shows as itself. Ordinary text keeps
 * its characters as written, so copying it stays faithful. A marker's neighbours are known only
 * in the whole text: markdownToMrkdwn drops the spaces again inside words (MARKER_INSIDE_WORD).
 */
function literal(text: string): string {
  return escapeMrkdwn(text).replace(MARKERS, `${ZERO_WIDTH_SPACE}$&${ZERO_WIDTH_SPACE}`);
}

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
export function defuseFences(code: string): string {
  return code.replace(/```/g, "``\u200b`");
}

/** Source text as a ``` code block: escaped, fences inside defused, trailing newlines dropped. */
export function fence(code: string): string {
  return "```\n" + escapeMrkdwn(defuseFences(trimTrailing(code, "\n"))) + "\n```";
}

/** Formatted text as a quote: "> " before every line, a bare ">" on empty ones. */
export function quoteLines(mrkdwn: string): string {
  return mrkdwn
    .split("\n")
    .map((line) => (line.length > 0 ? `> ${line}` : ">"))
    .join("\n");
}

/** Wrap formatted text, keeping surrounding whitespace outside the markers (Slack needs that). */
function wrap(marker: string, text: string): string {
  // trim() strips exactly what \s matches, in linear time; /^(\s*)([\s\S]*?)(\s*)$/ retried the
  // trailing \s* at every position of a long inner whitespace run (seconds for `**x  …  x**`).
  const inner = text.trim();
  if (inner === "") return text;
  const start = text.length - text.trimStart().length;
  return `${text.slice(0, start)}${marker}${inner}${marker}${text.slice(start + inner.length)}`;
}

/** Slack's mrkdwn primitives for the shared markdown walk. */
const MRKDWN: MarkdownFormat = {
  text: source,
  escape: literal,
  htmlBlock: (html) => escapeMrkdwn(trimTrailing(html, "\n")),
  strong: (inner) => wrap("*", inner),
  em: (inner) => wrap("_", inner),
  del: (inner) => wrap("~", inner),
  code: (text) => "`" + escapeMrkdwn(defuseFences(decodeEntities(text, NAMED_ENTITIES))) + "`",
  link,
  pre: (code) => fence(code),
  quote: (blocks) => quoteLines(blocks.join("\n\n")),
  bullet: (depth) => BULLETS[depth % BULLETS.length] as string,
  listItem: (marker, body, depth) => {
    const indent = INDENT.repeat(depth);
    const [first = "", ...rest] = body.split("\n");
    const continuation = rest.map((line) =>
      line.length > 0 && !line.startsWith(indent) ? `${indent}  ${line}` : line,
    );
    return [`${indent}${marker} ${first}`, ...continuation].join("\n");
  },
  listSeparator: (loose) => (loose ? "\n\n" : "\n"),
  tableCell: (tokens) => decodeEntities(plainText(tokens), NAMED_ENTITIES).replace(/\n/g, " "),
  // Tables have no mrkdwn form: an aligned monospace block.
  table: (aligned) => fence(aligned),
};

/** Convert model markdown to Slack mrkdwn; renders sharing one render budget pass it as `budget`. */
export function markdownToMrkdwn(markdown: string, budget?: RenderBudget): string {
  if (markdown.trim().length === 0) return "";
  return renderMarkdown(markdown, MRKDWN, budget).replace(MARKER_INSIDE_WORD, "$1");
}

/** `<` opening Slack's mention syntax: `<!channel>`, `<!here>`, `<!subteam^…>`, `<@U…>`, `<#C…>`. */
const MENTION_OPENER = /<(?=[!@#])/g;

/**
 * Model markdown made inert for Slack's mention syntax, for where it goes to Slack unconverted
 * (a native stream's `markdown_text`): a zero-width space after each `<` that opens a mention, so
 * a prompt-injected answer cannot page a channel with `<!channel>` or ping people, and the text
 * reads the same. `afterOpener`: the previous piece of the same text ended with `<` (a stream's
 * pieces may split a token anywhere).
 */
export function defuseMentions(text: string, afterOpener: boolean): string {
  const defused = text.replace(MENTION_OPENER, `<${ZERO_WIDTH_SPACE}`);
  return afterOpener && /^[!@#]/.test(defused) ? ZERO_WIDTH_SPACE + defused : defused;
}
