/**
 * Card → Block Kit: the shared card view (channels/shared/card-view.ts) formatted as one Slack
 * message. The title on top, the body blocks (text as mrkdwn, code and diffs in code blocks,
 * quotes, fields), then one button per action (unique action ids, the value carrying only the
 * pending id and the action, labels ≤ 75 chars) and the footer; a decided card shows its outcome
 * instead. Everything is clamped to Slack's block, section and total-text limits; code cut to fit
 * is followed by a notice of how much is not shown, and of the file holding all of it once posted.
 */
import { clip } from "../../core/surrogate-pairs.js";
import {
  type Card,
  type CardField,
  type CardOutcome,
  type CardPerson,
  formatOutcome,
} from "../../core/card.js";
import { trimTrailing } from "../../core/trim-trailing.js";
import {
  type CardBlockFormat,
  type CardCut,
  type CardView,
  cardView,
  cutForCard,
  formatCardBlock,
} from "../shared/card-view.js";
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
import { escapeMrkdwn, PAGE_BUDGET, SLACK_LIMITS } from "./slack-limits.js";
import { defuseFences, markdownToMrkdwn, quoteLines } from "./slack-markdown.js";
import { splitMrkdwn } from "./slack-split.js";

/** A message payload: blocks plus the notification text. */
export interface SlackPayload {
  readonly blocks: Block[];
  readonly text: string;
}

/** Content blocks and buttons leave room for the title, the outcome / footer and the actions. */
const MAX_BODY_BLOCKS = 40;

/** Code cut so its fenced text stays within `room` (escaping counts); `file` as for cutForCard. */
function fitCode(code: string, room: number, file?: string): CardCut {
  const raw = trimTrailing(defuseFences(code), "\n");
  let cut = cutForCard(raw, room, file);
  for (
    let over = escapeMrkdwn(cut.shown).length - room;
    over > 0;
    over = escapeMrkdwn(cut.shown).length - room
  )
    cut = cutForCard(raw, cut.shown.length - over, file);
  return cut;
}

/** The most code one card section holds (its fence takes the rest). */
const CODE_ROOM = SLACK_LIMITS.sectionText - 8;

/** Whether a card's code section cuts `code`. */
export function cutsCode(code: string): boolean {
  return fitCode(code, CODE_ROOM).notice !== undefined;
}

/** Code cut to `room` as mrkdwn: the fenced code, then the notice of what is not shown when it was cut. */
function fencedCode(code: string, room: number, file?: string): string[] {
  const cut = fitCode(code, room, file);
  const fenced = `\`\`\`\n${escapeMrkdwn(cut.shown)}\n\`\`\``;
  return cut.notice === undefined ? [fenced] : [fenced, `*${escapeMrkdwn(cut.notice)}*`];
}

/**
 * A person as mrkdwn: a Slack user as a mention (`<@U0123>`), which Slack shows with their real
 * name and nobody can fake with a display name; anyone else as `fallback`, escaped.
 */
function slackPerson(person: CardPerson, fallback: string): string {
  return person.platform === "slack" && /^[UW][A-Z0-9]+$/.test(person.id)
    ? `<@${person.id}>`
    : escapeMrkdwn(fallback);
}

/** A field's value as mrkdwn: the person it names as slackPerson shows them, else its text. */
function fieldMrkdwn(field: CardField): string {
  return field.person ? slackPerson(field.person, field.value) : escapeMrkdwn(field.value);
}

/** Body blocks as Block Kit sections; `file` is the file posted with the card's whole code, if any. */
function blockKit(file?: string): CardBlockFormat<Block[]> {
  return {
    text: (markdown) => splitMrkdwn(markdownToMrkdwn(markdown), PAGE_BUDGET.section).map(section),
    code: (text) => fencedCode(text, CODE_ROOM, file).map(section),
    quote: (text) => [section(quoteLines(escapeMrkdwn(text)))],
    fields: (fields) => [fieldsSection(fields.map((f) => ({ label: f.label, mrkdwn: fieldMrkdwn(f) })))],
  };
}

/**
 * Body blocks as plain mrkdwn, for the fallback text. Code is laid out apart (cardPlainText): it
 * gets the room the other blocks leave, so here it takes none.
 */
const PLAIN_MRKDWN: CardBlockFormat<string> = {
  text: markdownToMrkdwn,
  code: () => "",
  quote: (text) => quoteLines(escapeMrkdwn(text)),
  fields: (fields) => fields.map((f) => `*${escapeMrkdwn(f.label)}:* ${fieldMrkdwn(f)}`).join("\n"),
};

/** Room kept beside cut code in the plain text: its fence, and the notice of what is not shown. */
const PLAIN_CODE_OVERHEAD = 400;

function cardButtons(view: CardView): Block[] {
  const elements = view.buttons.map((b, index) =>
    button(
      `${ACTION_IDS.cardPrefix}${index}`,
      b.label,
      encodeCardValue(view.pendingId, b.action),
      b.style === "default" ? undefined : b.style,
    ),
  );
  return actions(elements, `card_${view.pendingId}`.slice(0, SLACK_LIMITS.actionId - 8));
}

/**
 * An outcome line in mrkdwn: who decided as a mention (`<@U0123>`), which Slack shows with their
 * real name and nobody can fake with a display name. Anything but a Slack user id is shown as
 * plain text with its id.
 */
function slackOutcome(outcome: CardOutcome): string {
  return formatOutcome(outcome, escapeMrkdwn, (by) => slackPerson(by, `${by.name} (id ${by.id})`));
}

/** About how long a card's notification text may be (the title gives way to the outcome). */
const NOTIFICATION_CHARS = 300;
/** The most of what follows the person in an outcome (an answer) a notification keeps. */
const NOTIFICATION_AFTER = 100;
/** The least of the title a notification keeps, however long the outcome. */
const MIN_NOTIFICATION_TITLE = 40;

/**
 * Render a card; decided cards (with an outcome) show it instead of buttons and footer. `file`
 * names the file posted with the whole of its cut code (card-attachment.ts), if there is one.
 */
export function renderCard(card: Card, file?: string): SlackPayload {
  const view = cardView(card);
  const title = `${view.icon.shortcode} *${escapeMrkdwn(view.title)}*`;
  const blocks: Block[] = [section(title)];
  let textTotal = blockTextLength(blocks[0] as Block);
  let truncated = false;
  const format = blockKit(file);
  for (const block of view.blocks.flatMap((b) => formatCardBlock(b, format))) {
    const size = blockTextLength(block);
    if (blocks.length >= MAX_BODY_BLOCKS || textTotal + size > PAGE_BUDGET.text) {
      truncated = true;
      break;
    }
    blocks.push(block);
    textTotal += size;
  }
  if (truncated) blocks.push(context("_(shortened to fit in Slack)_"));
  if (view.outcome !== undefined) blocks.push(context(`*${slackOutcome(view.outcome)}*`));
  blocks.push(...cardButtons(view));
  if (view.footer !== undefined) blocks.push(context(escapeMrkdwn(view.footer)));
  // The notification's text: the title, cut to leave the outcome whole (a cut inside its <@U…>
  // mention would show the raw id), escaped like every other line of the card. What follows the
  // person (an answer, a plan's feedback) is cut short: it may be long, and chat.update refuses a
  // text over 4,000 characters.
  const outcome = view.outcome && {
    ...view.outcome,
    after: clip(view.outcome.after ?? "", NOTIFICATION_AFTER),
  };
  const state = outcome !== undefined ? ` — ${slackOutcome(outcome)}` : "";
  const titleBudget = Math.max(MIN_NOTIFICATION_TITLE, NOTIFICATION_CHARS - state.length);
  return { blocks, text: `${clip(escapeMrkdwn(view.title), titleBudget)}${state}` };
}

/** What ends the plain-text card: its outcome, or the typed replies that do what its buttons do. */
function closingLine(view: CardView): string | undefined {
  if (view.outcome !== undefined) return `*${slackOutcome(view.outcome)}*`;
  if (view.keys.deny !== undefined)
    return `Reply \`approve ${view.pendingId}\` or \`deny ${view.pendingId}\` in this thread.`;
  if ((view.kind === "question" || view.kind === "plan") && view.buttons.length > 0)
    return `Options: ${view.buttons.map((b) => escapeMrkdwn(b.label)).join(" · ")} — reply in this thread.`;
  return undefined;
}

/**
 * The card as plain mrkdwn, for when Slack refuses its blocks: the same content, and instead of
 * buttons the typed replies that do the same (`approve <id>` / `deny <id>`, or an answer). Cards
 * whose buttons have no typed form (a reviewer denial's Allow anyway, an item's Cancel) offer none.
 * Code gets the room the rest leaves under `limit`, cut as on the card with its notice (naming
 * `file`, the file posted with its whole text, when there is one): cutting the whole text at the
 * limit instead would drop, unsaid, the end of the command and what follows it. The outcome or
 * typed replies always end it; other long text is cut before them.
 */
export function cardPlainText(card: Card, limit: number, file?: string): string {
  const view = cardView(card);
  const title = `*${escapeMrkdwn(view.title)}*`;
  const closing = closingLine(view);
  const others = view.blocks.map((block) => formatCardBlock(block, PLAIN_MRKDWN));
  const restLength = [title, closing ?? "", ...others].reduce((total, part) => total + part.length + 2, 0);
  const codeBlocks = view.blocks.filter((block) => block.kind === "code").length;
  const room = Math.floor((limit - restLength) / Math.max(codeBlocks, 1)) - PLAIN_CODE_OVERHEAD;
  const codeRoom = Math.min(CODE_ROOM, Math.max(room, 0));
  const parts = view.blocks.map((block, index) =>
    block.kind === "code" ? fencedCode(block.text, codeRoom, file).join("\n") : others[index],
  );
  const body = [title, ...parts].join("\n\n");
  if (closing === undefined) return clip(body, limit);
  return `${clip(body, limit - closing.length - 2)}\n\n${closing}`;
}
