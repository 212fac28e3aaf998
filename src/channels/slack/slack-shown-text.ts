/**
 * What a Slack message shows, as the plain text the agent reads. Slack clients show a message's
 * `blocks`; its `text` is only the notification fallback, and a message posted through the API can
 * make the two say different things. So when a message has blocks, what it says is the visible
 * text of all of them, in order: rich_text (what Slack's own clients send), section (its text and
 * fields), header, context (its text elements), markdown, and an image as `[image: title]`; other
 * kinds (divider, actions, input, …) show no text of their own. `text` is read only when there
 * are no blocks — or no readable ones.
 *
 * The blocks are validated here (zod): a block or element type not known here is skipped, a known
 * one of the wrong shape makes the whole message unreadable as blocks (`undefined`: the caller
 * falls back to `text`). In rich_text, mentions read as ids — `@U…`, `#C…`, `@S…` — since the
 * block carries no label anyone sees; a link keeps its text beside the URL; emoji read `:name:`;
 * broadcasts `@here`; inline styles carry the mrkdwn markers Slack's `text` gives them (`code`,
 * *bold*, _italic_, ~strike~). rich_text is Slack's structured text, not markup: it is taken as it
 * is, never unescaped. The other blocks' text objects are Slack markup, read by plainText.
 */
import { z } from "zod";

const style = z
  .looseObject({
    bold: z.boolean().optional(),
    italic: z.boolean().optional(),
    strike: z.boolean().optional(),
    code: z.boolean().optional(),
  })
  .optional();
const textElement = z.looseObject({ type: z.literal("text"), text: z.string(), style });
const linkElement = z.looseObject({
  type: z.literal("link"),
  url: z.string(),
  text: z.string().optional(),
  style,
});
const userElement = z.looseObject({ type: z.literal("user"), user_id: z.string().min(1) });
const channelElement = z.looseObject({ type: z.literal("channel"), channel_id: z.string().min(1) });
const usergroupElement = z.looseObject({ type: z.literal("usergroup"), usergroup_id: z.string().min(1) });
const emojiElement = z.looseObject({ type: z.literal("emoji"), name: z.string().min(1) });
const broadcastElement = z.looseObject({
  type: z.literal("broadcast"),
  range: z.enum(["here", "channel", "everyone"]),
});
const dateElement = z.looseObject({ type: z.literal("date"), timestamp: z.number() });

const INLINE_TYPES = new Set(["text", "link", "user", "channel", "usergroup", "emoji", "broadcast", "date"]);
/** An element of a type not read here (an inline color or team, a future container): skipped. */
const skipped = (known: ReadonlySet<string>) =>
  z
    .looseObject({ type: z.string().refine((type) => !known.has(type)) })
    .transform(() => ({ type: "skipped" as const }));

const inlineElement = z.union([
  textElement,
  linkElement,
  userElement,
  channelElement,
  usergroupElement,
  emojiElement,
  broadcastElement,
  dateElement,
  skipped(INLINE_TYPES),
]);
type Inline = z.infer<typeof inlineElement>;

const richSection = z.looseObject({ type: z.literal("rich_text_section"), elements: z.array(inlineElement) });
const quote = z.looseObject({ type: z.literal("rich_text_quote"), elements: z.array(inlineElement) });
const preformatted = z.looseObject({
  type: z.literal("rich_text_preformatted"),
  elements: z.array(inlineElement),
});
const list = z.looseObject({
  type: z.literal("rich_text_list"),
  style: z.enum(["bullet", "ordered"]).optional(),
  indent: z.number().int().nonnegative().max(20).optional(),
  offset: z.number().int().nonnegative().optional(),
  elements: z.array(richSection),
});
const CONTAINER_TYPES = new Set([
  "rich_text_section",
  "rich_text_quote",
  "rich_text_preformatted",
  "rich_text_list",
]);
const container = z.union([richSection, quote, preformatted, list, skipped(CONTAINER_TYPES)]);
type Container = z.infer<typeof container>;

/** A layout block's text object: Slack markup (mrkdwn) or plain text, both read by plainText. */
const textObject = z.looseObject({ type: z.enum(["mrkdwn", "plain_text"]), text: z.string() });
type TextObject = z.infer<typeof textObject>;

const richTextBlock = z.looseObject({ type: z.literal("rich_text"), elements: z.array(container) });
const sectionBlock = z.looseObject({
  type: z.literal("section"),
  text: textObject.optional(),
  fields: z.array(textObject).optional(),
});
const headerBlock = z.looseObject({ type: z.literal("header"), text: textObject });
const contextBlock = z.looseObject({
  type: z.literal("context"),
  elements: z.array(z.union([textObject, skipped(new Set(["mrkdwn", "plain_text"]))])),
});
const markdownBlock = z.looseObject({ type: z.literal("markdown"), text: z.string() });
const imageBlock = z.looseObject({ type: z.literal("image"), title: textObject.optional() });
const BLOCK_TYPES = new Set(["rich_text", "section", "header", "context", "markdown", "image"]);
/** Any block: the kinds above are read, others (divider, actions, …) show no text and need only a type. */
const block = z.union([
  richTextBlock,
  sectionBlock,
  headerBlock,
  contextBlock,
  markdownBlock,
  imageBlock,
  skipped(BLOCK_TYPES),
]);
type Block = z.infer<typeof block>;
const blocksSchema = z.array(block);

/**
 * The text a message's blocks show, the bot's own mention left out; `undefined` when it has no
 * blocks, or when they are malformed (the caller then reads `text`). Blocks that show no text
 * make it "": their message says nothing, whatever its `text` says.
 */
export function shownText(blocks: unknown, botUserId: string): string | undefined {
  const parsed = shownBlocks(blocks);
  if (parsed === undefined) return undefined;
  return parsed
    .map((b) => blockText(b, botUserId))
    .filter((text) => text.length > 0)
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/**
 * Whether a message's blocks mention the user where people see it (a rich_text user element, or
 * `<@U…>` in mrkdwn); `undefined` when it has no readable blocks (the caller then reads `text`).
 */
export function shownMentions(blocks: unknown, userId: string): boolean | undefined {
  return shownBlocks(blocks)?.some((b) => blockMentions(b, userId));
}

/** Whether Slack markup mentions the user (`<@U…>` or `<@U…|label>`). */
export function mrkdwnMentions(text: string, userId: string): boolean {
  return text.includes(`<@${userId}>`) || text.includes(`<@${userId}|`);
}

/**
 * Each blocks array read so far, parsed (null: malformed or empty). A message's text and whether it
 * mentions the bot are read by several steps of its handling, and each would otherwise validate
 * its blocks again; keyed weakly, an entry goes with its message.
 */
const parsedBlocks = new WeakMap<object, Block[] | null>();

/** The blocks of a valid, non-empty blocks array; undefined when there are none or it is malformed. */
function shownBlocks(blocks: unknown): Block[] | undefined {
  if (blocks === undefined) return undefined;
  if (typeof blocks !== "object" || blocks === null) return parseBlocks(blocks) ?? undefined;
  let parsed = parsedBlocks.get(blocks);
  if (parsed === undefined) {
    parsed = parseBlocks(blocks);
    parsedBlocks.set(blocks, parsed);
  }
  return parsed ?? undefined;
}

function parseBlocks(blocks: unknown): Block[] | null {
  const parsed = blocksSchema.safeParse(blocks);
  return parsed.success && parsed.data.length > 0 ? parsed.data : null;
}

function blockText(b: Block, botUserId: string): string {
  const read = (t: TextObject | undefined) => (t ? plainText(t.text, botUserId) : "");
  const lines = (texts: readonly string[]) => texts.filter((t) => t.length > 0).join("\n");
  switch (b.type) {
    case "rich_text":
      return b.elements.map((c) => containerText(c, botUserId)).join("\n");
    case "section":
      return lines([read(b.text), ...(b.fields ?? []).map(read)]);
    case "header":
      return read(b.text);
    case "context":
      return lines(b.elements.map((e) => (e.type === "skipped" ? "" : read(e))));
    case "markdown":
      return b.text.trim();
    case "image": {
      const title = read(b.title);
      return title ? `[image: ${title}]` : "[image]";
    }
    case "skipped":
      return "";
  }
}

function blockMentions(b: Block, userId: string): boolean {
  const inMrkdwn = (t: TextObject | undefined) => t?.type === "mrkdwn" && mrkdwnMentions(t.text, userId);
  switch (b.type) {
    case "rich_text":
      return b.elements.some((c) => {
        if (c.type === "skipped") return false;
        const inlines =
          c.type === "rich_text_list" ? c.elements.flatMap((item) => item.elements) : c.elements;
        return inlines.some((e) => e.type === "user" && e.user_id === userId);
      });
    case "section":
      return inMrkdwn(b.text) || (b.fields ?? []).some(inMrkdwn);
    case "context":
      return b.elements.some((e) => e.type !== "skipped" && inMrkdwn(e));
    case "header":
    case "markdown":
    case "image":
    case "skipped":
      return false;
  }
}

function containerText(c: Container, botUserId: string): string {
  switch (c.type) {
    case "rich_text_section":
      return spoken(inlineText(c.elements, botUserId));
    case "rich_text_quote":
      return spoken(inlineText(c.elements, botUserId))
        .split("\n")
        .map((line) => `> ${line}`)
        .join("\n");
    case "rich_text_preformatted":
      return `\`\`\`\n${inlineText(c.elements, botUserId, false).replace(/\n+$/, "")}\n\`\`\``;
    case "rich_text_list": {
      const pad = "  ".repeat(c.indent ?? 0);
      return c.elements
        .map((item, i) => {
          const marker = c.style === "ordered" ? `${(c.offset ?? 0) + i + 1}.` : "-";
          return `${pad}${marker} ${spoken(inlineText(item.elements, botUserId))}`;
        })
        .join("\n");
    }
    case "skipped":
      return "";
  }
}

/** Outside code: runs of spaces (a removed mention leaves two) read as one, edges trimmed. */
function spoken(text: string): string {
  return text
    .replace(/[ \t]{2,}/g, " ")
    .replace(/^[ \t]+|[ \t]+$/gm, "")
    .replace(/\n+$/, "");
}

/** A run of inline elements; `styled` false inside a code block, whose text shows no markers. */
function inlineText(elements: readonly Inline[], botUserId: string, styled = true): string {
  return elements.map((e) => inline(e, botUserId, styled)).join("");
}

function inline(e: Inline, botUserId: string, styled: boolean): string {
  switch (e.type) {
    case "text":
      return styled ? withStyle(e.text, e.style) : e.text;
    case "link": {
      const { url, text } = e;
      const shown = text && text !== url ? `${text} (${url})` : url;
      return styled ? withStyle(shown, e.style) : shown;
    }
    case "user":
      return e.user_id === botUserId ? "" : `@${e.user_id}`;
    case "channel":
      return `#${e.channel_id}`;
    case "usergroup":
      return `@${e.usergroup_id}`;
    case "emoji":
      return `:${e.name}:`;
    case "broadcast":
      return `@${e.range}`;
    case "date":
      return dateText(e.timestamp);
    case "skipped":
      return "";
  }
}

/**
 * Styled text with the mrkdwn markers Slack's `text` fallback gives it — `code`, *bold*, _italic_,
 * ~strike~ — around the words, the spaces at either end left outside (as Slack does).
 */
function withStyle(text: string, s: z.infer<typeof style>): string {
  if (!s) return text;
  const [, lead = "", words = "", trail = ""] = /^(\s*)([\s\S]*?)(\s*)$/.exec(text) ?? [];
  if (words.length === 0) return text;
  let marked = words;
  if (s.code) marked = `\`${marked}\``;
  if (s.bold) marked = `*${marked}*`;
  if (s.italic) marked = `_${marked}_`;
  if (s.strike) marked = `~${marked}~`;
  return `${lead}${marked}${trail}`;
}

/**
 * Slack's message markup as plain text: the bot's mention removed, entities and links resolved.
 * A person's, channel's or user group's mention reads as its id (`@U…`, `#C…`, `@S…`): its label
 * is whatever the poster's app wrote — Slack clients ignore it and show the real name — so it
 * could name someone (or some channel) the thread never shows; for the same reason `<!here|…>`
 * reads `@here` and a date reads as its timestamp. A link keeps its label, shown beside the URL.
 * No entity holds a raw `<` (Slack sends a typed one as `&lt;`), so each pattern stops at the next
 * one: a message of unclosed `<a:` or `<#C|` runs is read in one pass, where scanning every run to
 * the end of the text took a second for 40,000 characters — per message anyone could post.
 */
export function plainText(text: string, botUserId: string): string {
  return text
    .replace(new RegExp(`<@${botUserId}(?:\\|[^<>]*)?>`, "g"), "")
    .replace(/<@([A-Z0-9]+)(?:\|[^<>]*)?>/g, "@$1")
    .replace(/<#([A-Z0-9]+)(?:\|[^<>]*)?>/g, "#$1")
    .replace(/<!(here|channel|everyone)(?:\|[^<>]*)?>/g, "@$1")
    .replace(/<!subteam\^([A-Z0-9]+)(?:\|[^<>]*)?>/g, "@$1")
    .replace(/<!date\^(\d{1,12})\^[^|<>]*(?:\|[^<>]*)?>/g, (_m, seconds: string) => dateText(Number(seconds)))
    .replace(/<([a-z][a-z0-9+.-]*:[^|<>]+)\|([^<>]+)>/gi, "$2 ($1)")
    .replace(/<([a-z][a-z0-9+.-]*:[^|<>]+)>/gi, "$1")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&")
    .replace(/[ \t]{2,}/g, " ")
    .trim();
}

/** A date element as clients show it, by its timestamp (its fallback text is the poster's). */
function dateText(seconds: number): string {
  const date = new Date(seconds * 1_000);
  return Number.isNaN(date.getTime()) ? "" : date.toISOString().replace(/\.000Z$/, "Z");
}
