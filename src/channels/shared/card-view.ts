/**
 * What a card shows, derived once from a `Card` for every channel: its icon and title, its body
 * (a diff is code in the "diff" language; empty field lists are dropped; a field keeps the person
 * it names, for platforms that show them unforgeably), whether it is still open, the buttons it
 * offers (one per action), the footer while open, the outcome once decided, and which buttons the
 * typed answers stand for (approve / always / deny). Characters that hide or reorder text are
 * shown as their code points everywhere in it. Slack blocks, the Telegram inline keyboard and
 * HTML, and the console prompt only format this view.
 */
import { APPROVE_ONCE, DENY } from "../../approvals/approval-card.js";
import type { Card, CardBlock, CardButton, CardField, CardOutcome, CardPerson } from "../../core/card.js";
import { cutBeforeCharacter } from "../../core/surrogate-pairs.js";
import { revealHidden } from "./reveal-hidden.js";
import { groupedCount } from "../../core/count-text.js";

/** A body block of the view: `CardBlock` with diffs turned into code. */
export type CardViewBlock = Exclude<CardBlock, { readonly kind: "diff" }>;

/** A card kind's icon, as an emoji and as Slack's shortcode for it. */
export interface CardIcon {
  readonly emoji: string;
  readonly shortcode: string;
}

/** The buttons the typed answers to an approval stand for. */
export interface ApprovalKeys {
  /** Approve this once ("a", "approve"). */
  readonly approve?: CardButton;
  /** The broader approval ("A", "always"): always for the tool or command, or read-only for the session. */
  readonly always?: CardButton;
  /** Deny ("d", "deny"). */
  readonly deny?: CardButton;
}

/** The platform-neutral view of a card. */
export interface CardView {
  readonly pendingId: string;
  readonly kind: Card["kind"];
  readonly icon: CardIcon;
  readonly title: string;
  readonly blocks: readonly CardViewBlock[];
  /**
   * Still waiting for a person: not decided, and with buttons to press or a footer saying how to
   * answer (a question without options is answered by a reply).
   */
  readonly open: boolean;
  /** The buttons to show, one per action in the card's order; none once the card is closed. */
  readonly buttons: readonly CardButton[];
  /** The hint under the buttons, while open. */
  readonly footer?: string;
  /** How it was decided ("Approved by " + the person), once it was; each platform formats the person. */
  readonly outcome?: CardOutcome;
  /** For approvals: the buttons the typed answers press. Empty for other kinds. */
  readonly keys: ApprovalKeys;
}

const ICONS: Readonly<Record<Card["kind"], CardIcon>> = Object.freeze({
  approval: { emoji: "🔐", shortcode: ":lock:" },
  question: { emoji: "❓", shortcode: ":question:" },
  plan: { emoji: "📋", shortcode: ":clipboard:" },
  item: { emoji: "📌", shortcode: ":pushpin:" },
});

/** A person as the view shows them: their name with hidden characters revealed. */
function viewPerson(person: CardPerson): CardPerson {
  return { ...person, name: revealHidden(person.name) };
}

/** A field as the view shows it, with the person it names kept for platforms that can show them. */
function viewField(field: CardField): CardField {
  const label = revealHidden(field.label);
  const value = revealHidden(field.value);
  return field.person ? { label, value, person: viewPerson(field.person) } : { label, value };
}

function viewBlock(block: CardBlock): CardViewBlock[] {
  switch (block.kind) {
    case "diff":
      return [{ kind: "code", text: revealHidden(block.text), language: "diff" }];
    case "fields":
      return block.fields.length === 0
        ? []
        : [
            {
              kind: "fields",
              fields: block.fields.map(viewField),
            },
          ];
    default:
      return [{ ...block, text: revealHidden(block.text) }];
  }
}

function uniqueActions(buttons: readonly CardButton[]): CardButton[] {
  const unique = new Map<string, CardButton>();
  for (const button of buttons) if (!unique.has(button.action)) unique.set(button.action, button);
  return [...unique.values()];
}

function approvalKeys(card: Card, buttons: readonly CardButton[]): ApprovalKeys {
  if (card.kind !== "approval") return {};
  return {
    approve: buttons.find((button) => button.action === APPROVE_ONCE),
    always: buttons.find(
      (button) => button.action.startsWith("always") || button.action === "readonly_session",
    ),
    deny: buttons.find((button) => button.action === DENY),
  };
}

function viewOutcome(outcome: CardOutcome): CardOutcome {
  const text = revealHidden(outcome.text);
  const next = outcome.next === undefined ? {} : { next: viewOutcome(outcome.next) };
  if (!outcome.by) return { text, ...next };
  const by = viewPerson(outcome.by);
  const after = outcome.after === undefined ? {} : { after: revealHidden(outcome.after) };
  return { text, by, ...after, ...next };
}

/** Derive what `card` shows. */
export function cardView(card: Card): CardView {
  const open = card.outcome === undefined && (card.buttons.length > 0 || card.footer !== undefined);
  const buttons = open
    ? uniqueActions(card.buttons).map((button) => ({ ...button, label: revealHidden(button.label) }))
    : [];
  return {
    pendingId: card.pendingId,
    kind: card.kind,
    icon: ICONS[card.kind],
    title: revealHidden(card.title),
    blocks: card.blocks.flatMap(viewBlock),
    open,
    buttons,
    ...(open && card.footer !== undefined ? { footer: card.footer } : {}),
    ...(card.outcome !== undefined ? { outcome: viewOutcome(card.outcome) } : {}),
    keys: approvalKeys(card, buttons),
  };
}

/** Code cut to fit a card: the part shown, and when anything is left out, the notice saying so. */
export interface CardCut {
  readonly shown: string;
  readonly notice?: string;
}

/**
 * `code` cut to at most `limit` characters (never inside a surrogate pair). A cut card body says,
 * outside the code, how much is not shown: a person deciding on a command padded past what the
 * card holds must know there is a rest they cannot read. With `file`, the name of the file
 * posted beside the card with the whole text (card-attachment.ts), the notice sends them there.
 */
export function cutForCard(code: string, limit: number, file?: string): CardCut {
  if (code.length <= limit) return { shown: code };
  const end = cutBeforeCharacter(code, Math.max(0, limit));
  const hidden = code.length - end;
  const advice =
    file === undefined
      ? "Decide only on what you can read."
      : `The whole text is in the file ${file} posted with this card: read it there before you decide.`;
  return {
    shown: code.slice(0, end),
    notice: `⚠️ ${groupedCount(hidden)} more characters are not shown here (the first ${groupedCount(end)} of ${groupedCount(code.length)}). ${advice}`,
  };
}

/** A platform's rendering of the four kinds of body block. */
export interface CardBlockFormat<T> {
  text(markdown: string): T;
  code(text: string, language: string): T;
  quote(text: string): T;
  fields(fields: readonly CardField[]): T;
}

/** Render one body block with a platform's format. */
export function formatCardBlock<T>(block: CardViewBlock, format: CardBlockFormat<T>): T {
  switch (block.kind) {
    case "text":
      return format.text(block.text);
    case "code":
      return format.code(block.text, block.language?.replace(/[^\w+#.-]/g, "") ?? "");
    case "quote":
      return format.quote(block.text);
    case "fields":
      return format.fields(block.fields);
  }
}
