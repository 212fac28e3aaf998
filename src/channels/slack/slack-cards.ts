/**
 * Card → Block Kit: approval, question and plan cards as one Slack message. The title on top,
 * the body blocks (text as mrkdwn, code and diffs in code blocks, quotes, fields), then one
 * button per card action (unique action ids, the value carrying only the pending id and the
 * action, labels ≤ 75 chars) and the footer. A decided card shows its outcome instead of the
 * buttons. Everything is clamped to Slack's block, section and total-text limits.
 */
import { DENY } from "../../approvals/approval-card.js";
import type { Card, CardBlock, CardButton } from "../../core/card.js";
import {
  ACTION_IDS,
  actions,
  type Block,
  blockTextLength,
  button,
  context,
  encodeCardValue,
  fieldsSection,
  section,
} from "./slack-blocks.js";
import { escapeMrkdwn, PAGE_BUDGET, SLACK_LIMITS, truncate } from "./slack-limits.js";
import { markdownToMrkdwn } from "./slack-markdown.js";
import { splitMrkdwn } from "./slack-split.js";

/** A message payload: blocks plus the notification text. */
export interface SlackPayload {
  readonly blocks: Block[];
  readonly text: string;
}

const KIND_ICON: Readonly<Record<Card["kind"], string>> = {
  approval: ":lock:",
  question: ":question:",
  plan: ":clipboard:",
  item: ":pushpin:",
};

/** Content blocks and buttons leave room for the title, the outcome / footer and the actions. */
const MAX_BODY_BLOCKS = 40;

/** A code block whose content is cut so the whole section stays under the limit. */
export function codeSection(code: string, label?: string): Block {
  const head = label ? `${label}\n` : "";
  const room = SLACK_LIMITS.sectionText - head.length - 8;
  const body = escapeMrkdwn(code.replace(/```/g, "``\u200b`").replace(/\n+$/, ""));
  return section(`${head}\`\`\`\n${truncate(body, room)}\n\`\`\``);
}

function quoteSection(text: string): Block {
  const quoted = escapeMrkdwn(text)
    .split("\n")
    .map((line) => `> ${line}`)
    .join("\n");
  return section(quoted);
}

function bodyBlocks(block: CardBlock): Block[] {
  switch (block.kind) {
    case "text":
      return splitMrkdwn(markdownToMrkdwn(block.text), PAGE_BUDGET.section).map(section);
    case "code":
      return [codeSection(block.text)];
    case "diff":
      return [codeSection(block.text)];
    case "quote":
      return [quoteSection(block.text)];
    case "fields":
      return block.fields.length > 0 ? [fieldsSection(block.fields)] : [];
  }
}

function cardButtons(card: Card): Block[] {
  const unique = new Map<string, CardButton>();
  for (const b of card.buttons) if (!unique.has(b.action)) unique.set(b.action, b);
  const elements = [...unique.values()].map((b, index) =>
    button(
      `${ACTION_IDS.cardPrefix}${index}`,
      b.label,
      encodeCardValue(card.pendingId, b.action),
      b.style === "default" ? undefined : b.style,
    ),
  );
  return actions(elements, `card_${card.pendingId}`.slice(0, SLACK_LIMITS.actionId - 8));
}

/** Render a card; decided cards (with an outcome) show it instead of buttons and footer. */
export function renderCard(card: Card): SlackPayload {
  const title = `${KIND_ICON[card.kind]} *${escapeMrkdwn(card.title)}*`;
  const blocks: Block[] = [section(title)];
  let textTotal = blockTextLength(blocks[0] as Block);
  let truncated = false;
  for (const block of card.blocks.flatMap(bodyBlocks)) {
    const size = blockTextLength(block);
    if (blocks.length >= MAX_BODY_BLOCKS || textTotal + size > PAGE_BUDGET.text) {
      truncated = true;
      break;
    }
    blocks.push(block);
    textTotal += size;
  }
  if (truncated) blocks.push(context("_(shortened to fit in Slack)_"));
  if (card.outcome !== undefined) {
    blocks.push(context(`*${escapeMrkdwn(card.outcome)}*`));
  } else {
    blocks.push(...cardButtons(card));
    if (card.footer) blocks.push(context(escapeMrkdwn(card.footer)));
  }
  const state = card.outcome !== undefined ? ` — ${card.outcome}` : "";
  return { blocks, text: truncate(`${card.title}${state}`, 300) };
}

function plainBlock(block: CardBlock): string {
  switch (block.kind) {
    case "text":
      return markdownToMrkdwn(block.text);
    case "code":
    case "diff":
      return "```\n" + escapeMrkdwn(block.text.replace(/```/g, "``\u200b`")) + "\n```";
    case "quote":
      return escapeMrkdwn(block.text)
        .split("\n")
        .map((line) => `> ${line}`)
        .join("\n");
    case "fields":
      return block.fields.map((f) => `*${escapeMrkdwn(f.label)}:* ${escapeMrkdwn(f.value)}`).join("\n");
  }
}

/**
 * The card as plain mrkdwn, for when Slack refuses its blocks: the same content, and instead of
 * buttons the typed replies that do the same (`approve <id>` / `deny <id>`, or an answer). Cards
 * whose buttons have no typed form (a reviewer denial's Allow anyway, an item's Cancel) offer none.
 */
export function cardPlainText(card: Card, limit: number): string {
  const parts = [`*${escapeMrkdwn(card.title)}*`, ...card.blocks.map(plainBlock)];
  if (card.outcome !== undefined) parts.push(`*${escapeMrkdwn(card.outcome)}*`);
  else if (card.kind === "approval" && card.buttons.some((button) => button.action === DENY)) {
    parts.push(`Reply \`approve ${card.pendingId}\` or \`deny ${card.pendingId}\` in this thread.`);
  } else if ((card.kind === "question" || card.kind === "plan") && card.buttons.length > 0) {
    parts.push(
      `Options: ${card.buttons.map((b) => escapeMrkdwn(b.label)).join(" · ")} — reply in this thread.`,
    );
  }
  return truncate(parts.join("\n\n"), limit);
}
