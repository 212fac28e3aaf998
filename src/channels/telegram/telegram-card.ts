/**
 * Cards (approvals, questions, plans) as Telegram messages with inline keyboards, and the
 * callback_data format behind their buttons: `k:<pendingId>:<action>` for card buttons and
 * `c:<control>` for the Stop button, always within Telegram's 64 bytes. The card is the shared
 * card view (channels/shared/card-view.ts) formatted as HTML; a decided card shows its outcome
 * instead of buttons. Code cut to fit is followed by a notice of how much is not shown, and of the
 * file holding all of it once posted. A field naming a person is cut in the name, never the user id.
 */
import type { InlineKeyboardButton, InlineKeyboardMarkup } from "grammy/types";
import { parseQuestionAction } from "../../approvals/question-card.js";
import { personText } from "../../core/person-text.js";
import { clip, clipWithMarker } from "../../core/surrogate-pairs.js";
import {
  type Card,
  type CardButton,
  type CardField,
  type CardOutcome,
  formatOutcome,
} from "../../core/card.js";
import {
  type CardBlockFormat,
  type CardView,
  cardView,
  cutForCard,
  formatCardBlock,
} from "../shared/card-view.js";
import { escapeHtml, markdownToTelegramHtml, preBlock } from "./telegram-html.js";
import { splitTelegramHtml } from "./telegram-split.js";

/** What a button press asks for. */
export type CallbackAction =
  | { readonly kind: "card"; readonly pendingId: string; readonly action: string }
  | { readonly kind: "control"; readonly control: "stop" | "retry" };

const MAX_DATA_BYTES = 64;
const CARD_DATA = /^k:([A-Za-z0-9_-]{1,24}):([\w:.-]{1,37})$/;
const CONTROL_DATA = /^c:(stop|retry)$/;

/** callback_data for a card button; throws when the ids do not fit Telegram's 64 bytes. */
export function cardCallbackData(pendingId: string, action: string): string {
  const data = `k:${pendingId}:${action}`;
  if (!CARD_DATA.test(data) || Buffer.byteLength(data, "utf8") > MAX_DATA_BYTES) {
    throw new Error(
      `card button does not fit Telegram callback_data: pending id "${pendingId}", action "${action}"`,
    );
  }
  return data;
}

/** callback_data for a turn control button. */
export function controlCallbackData(control: "stop" | "retry"): string {
  return `c:${control}`;
}

/** Read callback_data; undefined for anything we did not create. */
export function parseCallbackData(data: string | undefined): CallbackAction | undefined {
  if (data === undefined) return undefined;
  const card = CARD_DATA.exec(data);
  if (card) return { kind: "card", pendingId: card[1]!, action: card[2]! };
  const control = CONTROL_DATA.exec(data);
  if (control) return { kind: "control", control: control[1] as "stop" | "retry" };
  return undefined;
}

/** The keyboard on a live reply: one Stop button (Telegram's own stop button on drafts). */
export const STOP_KEYBOARD: InlineKeyboardMarkup = Object.freeze({
  inline_keyboard: [[{ text: "⏹ Stop", callback_data: controlCallbackData("stop") }]],
}) as InlineKeyboardMarkup;

/** The keyboard under the answer of a failed turn: one Retry button. */
export const RETRY_KEYBOARD: InlineKeyboardMarkup = Object.freeze({
  inline_keyboard: [[{ text: "🔁 Retry", callback_data: controlCallbackData("retry") }]],
}) as InlineKeyboardMarkup;

const BLOCK_CHARS = 1500;
const LABEL_CHARS = 60;
const SHORT_LABEL = 18;

/** Characters of a field's value a card shows. */
const FIELD_CHARS = 300;

/**
 * A field's value as the card shows it, cut to FIELD_CHARS. A field naming a person is cut in the
 * name, never the user id: a padded name must not push the id, which no name can fake, out of view.
 */
function fieldValue(field: CardField): string {
  if (!field.person) return cut(field.value, FIELD_CHARS);
  const { person } = field;
  const id = personText({ ...person, name: "" });
  const room = Math.max(FIELD_CHARS - id.length, 1);
  const name = clip(person.name, room);
  return personText({ ...person, name });
}

/** `text` cut to `limit` whole characters, a cut one followed by how many of its lines are not shown. */
function cut(text: string, limit: number): string {
  return clipWithMarker(text, limit, (dropped) => {
    const lines = text.slice(text.length - dropped).split("\n").length - 1;
    return `\n… ${lines > 0 ? `${lines} more lines` : "cut"}`;
  });
}

/** Whether a card's code block cuts `code`. */
export function cutsCode(code: string): boolean {
  return cutForCard(code, BLOCK_CHARS).notice !== undefined;
}

/**
 * Body blocks as Telegram HTML, each cut to a readable length; `file` is the file posted with
 * the whole of the card's cut code, if any.
 */
function cardHtml(file?: string): CardBlockFormat<string> {
  return {
    text: (markdown) => markdownToTelegramHtml(cut(markdown, BLOCK_CHARS)),
    code: (text, language) => {
      const { shown, notice } = cutForCard(text, BLOCK_CHARS, file);
      const code = preBlock(escapeHtml(shown), language);
      return notice === undefined ? code : `${code}\n<b>${escapeHtml(notice)}</b>`;
    },
    quote: (text) => `<blockquote>${escapeHtml(cut(text, BLOCK_CHARS))}</blockquote>`,
    fields: (fields) =>
      fields.map((field) => `<b>${escapeHtml(field.label)}:</b> ${escapeHtml(fieldValue(field))}`).join("\n"),
  };
}

function button(pendingId: string, entry: CardButton): InlineKeyboardButton {
  const label = clip(entry.label, LABEL_CHARS);
  return {
    text: label,
    callback_data: cardCallbackData(pendingId, entry.action),
    ...(entry.style === "default" ? {} : { style: entry.style }),
  };
}

/** Short labels share a row (up to three); long ones get a row each. */
function rows(view: CardView): InlineKeyboardButton[][] {
  const layout: InlineKeyboardButton[][] = [];
  let row: InlineKeyboardButton[] = [];
  for (const entry of view.buttons) {
    if (entry.label.length > SHORT_LABEL) {
      if (row.length > 0) layout.push(row);
      layout.push([button(view.pendingId, entry)]);
      row = [];
    } else {
      row.push(button(view.pendingId, entry));
      if (row.length === 3) {
        layout.push(row);
        row = [];
      }
    }
  }
  if (row.length > 0) layout.push(row);
  return layout;
}

/**
 * An outcome line in HTML: who decided by name and user id ("Ana (id 123456)"): anyone may call
 * themselves Ana, the id is theirs alone.
 */
function telegramOutcome(outcome: CardOutcome): string {
  return formatOutcome(outcome, escapeHtml, (by) => `${escapeHtml(by.name)} (id ${escapeHtml(by.id)})`);
}

/**
 * The card as it goes when Telegram refuses its keyboard: no buttons; an open question's options
 * written out in its footer, to be answered by a reply (another card's footer already says how to
 * answer it by typing). A settled card, without buttons already, goes as it is.
 */
export function cardWithoutButtons(card: Card): Card {
  if (card.buttons.length === 0) return card;
  const footer = card.kind === "question" ? writtenOptions(card.buttons) : card.footer;
  return { ...card, buttons: [], ...(footer === undefined ? {} : { footer }) };
}

/**
 * A question card's options written out, with how to answer by typing: one list for one question,
 * and for a group (its buttons labelled "<n>: option", actions "q<i>:o<j>") a list per question
 * still open, numbered as the card numbers them — a typed reply answers the first of them.
 */
function writtenOptions(buttons: readonly CardButton[]): string {
  const prefixOf = (button: CardButton) => `${(parseQuestionAction(button.action)?.question ?? 0) + 1}: `;
  const grouped = buttons.every((button) => button.label.startsWith(prefixOf(button)));
  if (!grouped)
    return `Options: ${buttons.map((b) => b.label).join(" · ")}. Reply to this message with your answer.`;
  const lists = new Map<string, string[]>();
  for (const button of buttons) {
    const prefix = prefixOf(button);
    lists.set(prefix, [...(lists.get(prefix) ?? []), button.label.slice(prefix.length)]);
  }
  const written = [...lists].map(([prefix, labels]) => `${prefix}${labels.join(" · ")}`).join("; ");
  return `Options — ${written}. Reply to this message with your answer to the first question not yet answered.`;
}

/**
 * Render a card as one Telegram message: HTML text plus its keyboard (none once decided). An open
 * card without buttons (a question without options) asks for a reply instead (`forceReply`: the
 * asker's app opens a reply to it, which a group's bot then sees). `file` names the file posted
 * with the whole of its cut code (card-attachment.ts), if there is one.
 */
export function renderCard(
  card: Card,
  file?: string,
): { html: string; replyMarkup?: InlineKeyboardMarkup; forceReply?: true } {
  const view = cardView(card);
  const format = cardHtml(file);
  const body = [
    `<b>${view.icon.emoji} ${escapeHtml(view.title)}</b>`,
    ...view.blocks.map((block) => formatCardBlock(block, format)),
    ...(view.footer ? [`<i>${escapeHtml(view.footer)}</i>`] : []),
  ]
    .filter((part) => part !== "")
    .join("\n\n");
  const outcome = view.outcome ? `\n\n<b>${telegramOutcome(view.outcome)}</b>` : "";
  const full = body + outcome;
  // Blocks are already cut; a card with many blocks may still be long: keep its head and the outcome.
  const html =
    splitTelegramHtml(full).length <= 1 ? full : `${splitTelegramHtml(body, 3800)[0] ?? ""}\n…${outcome}`;
  if (!view.open) return { html };
  return view.buttons.length > 0
    ? { html, replyMarkup: { inline_keyboard: rows(view) } }
    : { html, forceReply: true };
}
