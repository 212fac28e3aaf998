/**
 * A Slack message's rich_text blocks as the plain text people see. Slack clients show a message's
 * `blocks`; its `text` is only the notification fallback, and a message posted through the API can
 * make the two say different things. Slack's own clients always send a rich_text block matching
 * what they show, so the agent reads these blocks when there are any.
 *
 * The blocks are validated here (zod): an element type not known here is skipped, a known one of
 * the wrong shape makes the whole message unreadable as blocks (`undefined`: the caller falls back
 * to `text`). Mentions read as ids — `@U…`, `#C…`, `@S…` — since the block carries no label
 * anyone sees; a link keeps its text beside the URL; emoji read `:name:`; broadcasts `@here`.
 * Block text is Slack's structured text, not markup: it is taken as it is, never unescaped.
 */
import { z } from "zod";

const textElement = z.looseObject({ type: z.literal("text"), text: z.string() });
const linkElement = z.looseObject({ type: z.literal("link"), url: z.string(), text: z.string().optional() });
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

const section = z.looseObject({ type: z.literal("rich_text_section"), elements: z.array(inlineElement) });
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
  elements: z.array(section),
});
const CONTAINER_TYPES = new Set([
  "rich_text_section",
  "rich_text_quote",
  "rich_text_preformatted",
  "rich_text_list",
]);
const container = z.union([section, quote, preformatted, list, skipped(CONTAINER_TYPES)]);
type Container = z.infer<typeof container>;

const richTextBlock = z.looseObject({ type: z.literal("rich_text"), elements: z.array(container) });
/** Any block: rich_text ones are read in full, others (section, image, …) only need a type. */
const block = z.union([richTextBlock, skipped(new Set(["rich_text"]))]);
const blocksSchema = z.array(block);

/**
 * The text of a message's rich_text blocks, the bot's own mention left out; `undefined` when it
 * has none, or when its blocks are malformed (the caller then reads `text`).
 */
export function richTextOf(blocks: unknown, botUserId: string): string | undefined {
  const richText = richTextBlocks(blocks);
  if (richText === undefined) return undefined;
  return richText
    .map((b) => b.elements.map((c) => containerText(c, botUserId)).join("\n"))
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/** Whether a message's rich_text blocks (if it has readable ones) mention the user. */
export function richTextMentions(blocks: unknown, userId: string): boolean {
  return (richTextBlocks(blocks) ?? []).some((b) =>
    b.elements.some((c) => {
      if (c.type === "skipped") return false;
      const inlines = c.type === "rich_text_list" ? c.elements.flatMap((item) => item.elements) : c.elements;
      return inlines.some((e) => e.type === "user" && e.user_id === userId);
    }),
  );
}

/** The rich_text blocks of a valid blocks array; undefined when there are none or it is malformed. */
function richTextBlocks(blocks: unknown): z.infer<typeof richTextBlock>[] | undefined {
  if (blocks === undefined) return undefined;
  const parsed = blocksSchema.safeParse(blocks);
  if (!parsed.success) return undefined;
  const richText = parsed.data.flatMap((b) => (b.type === "rich_text" ? [b] : []));
  return richText.length > 0 ? richText : undefined;
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
      return `\`\`\`\n${inlineText(c.elements, botUserId).replace(/\n+$/, "")}\n\`\`\``;
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

function inlineText(elements: readonly Inline[], botUserId: string): string {
  return elements.map((e) => inline(e, botUserId)).join("");
}

function inline(e: Inline, botUserId: string): string {
  switch (e.type) {
    case "text":
      return e.text;
    case "link": {
      const { url, text } = e;
      return text && text !== url ? `${text} (${url})` : url;
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

/** A date element as clients show it, by its timestamp (its fallback text is the poster's). */
export function dateText(seconds: number): string {
  const date = new Date(seconds * 1_000);
  return Number.isNaN(date.getTime()) ? "" : date.toISOString().replace(/\.000Z$/, "Z");
}
