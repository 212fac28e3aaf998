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
  | {
      readonly kind: "fields";
      readonly fields: readonly { readonly label: string; readonly value: string }[];
    };

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
  /** Set once decided: "Approved by @ana", "Expired", "Answered: yes". */
  readonly outcome?: string;
}

/** Where a posted card lives, so it can be updated later (persisted with the pending item). */
export interface CardRef {
  readonly messageId: string;
  readonly [detail: string]: string | number;
}
