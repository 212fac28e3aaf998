/**
 * Card: the platform-neutral model of an interactive message (approval, question, plan).
 * Channels render it as Block Kit, inline keyboards or a console prompt. Buttons carry only the
 * pending item's id and an action name, never the call itself.
 */

export type CardBlock =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "code"; readonly text: string; readonly language?: string }
  | { readonly kind: "diff"; readonly text: string }
  | { readonly kind: "quote"; readonly text: string }
  | { readonly kind: "fields"; readonly fields: readonly CardField[] };

/**
 * One labelled value. `person`, when set, is who `value` names (in plain text: their name and user
 * id): a platform that can show them unforgeably (a Slack mention) shows them instead of `value`.
 */
export interface CardField {
  readonly label: string;
  readonly value: string;
  readonly person?: CardPerson;
}

export type ButtonStyle = "primary" | "danger" | "default";

export interface CardButton {
  /** e.g. "once", "always_tool", "deny", "q0:o1" (question 0, option 1). */
  readonly action: string;
  /** Shown to people; channels cut it to their limit (Slack: 75 chars). */
  readonly label: string;
  readonly style: ButtonStyle;
}

export interface Card {
  /** The pending item's id (≤ 24 chars), carried by every button. */
  readonly pendingId: string;
  /** "item": a person's standing item (scheduled task, subscription) listed with a Cancel button. */
  readonly kind: "approval" | "question" | "plan" | "item";
  readonly title: string;
  /** For an approval, the tool it asks about (a registry name): names what is posted beside the card. */
  readonly tool?: string;
  readonly blocks: readonly CardBlock[];
  /** Empty once decided. */
  readonly buttons: readonly CardButton[];
  /** A hint under the buttons, e.g. "or reply in this thread". */
  readonly footer?: string;
  /** Set once decided: "Approved by <person>", "Expired", "Answered by <person>: yes". */
  readonly outcome?: CardOutcome;
}

/**
 * Who decided a card, as the platform knows them: each channel shows them in a form nobody can
 * forge (a Slack mention, a Telegram user id beside the name), never by the display name alone.
 */
export interface CardPerson {
  readonly platform: string;
  /** The platform user id ("U0123", "123456"). */
  readonly id: string;
  readonly name: string;
}

/**
 * A decided card's outcome line: `text`, then, when a person decided, that person and `after`
 * ("Approved by " + Ana + " — Always allow write_file"). System outcomes have `text` alone. A line
 * naming several people goes on in `next`, part after part ("Answered: prod (" + Boss + ")", then
 * " · T-1 (" + Ana + ")"), each person shown as the channel shows people.
 */
export interface CardOutcome {
  readonly text: string;
  readonly by?: CardPerson;
  readonly after?: string;
  readonly next?: CardOutcome;
}

/** Where a posted card lives, so it can be updated later (persisted with the pending item). */
export interface CardRef {
  readonly messageId: string;
  readonly [detail: string]: string | number;
}

/**
 * An outcome line in a platform's format: its text parts escaped for it by `escapeText`, the person
 * by `person` (a Slack mention, a Telegram name with the user id).
 */
export function formatOutcome(
  outcome: CardOutcome,
  escapeText: (text: string) => string,
  person: (by: CardPerson) => string,
): string {
  const rest = outcome.next ? formatOutcome(outcome.next, escapeText, person) : "";
  if (!outcome.by) return `${escapeText(outcome.text)}${rest}`;
  return `${escapeText(outcome.text)}${person(outcome.by)}${escapeText(outcome.after ?? "")}${rest}`;
}
