/**
 * Slack's documented (and a few observed) payload limits, in one place, plus the escape Slack's
 * mrkdwn needs. Lengths are JavaScript string lengths (UTF-16 units): text is kept inside them with
 * core's `clip`.
 */

export const SLACK_LIMITS = Object.freeze({
  /** chat.update rejects `text` above this with `msg_too_long`. */
  updateText: 4_000,
  /** Blocks per message. */
  blocks: 50,
  /** Text of one section block (and of one context element). */
  sectionText: 3_000,
  /** Button label. */
  buttonText: 75,
  buttonValue: 2_000,
  actionId: 255,
  /** Elements of one actions block. */
  actionsElements: 25,
  /** Fields of one section block, and the text of each. */
  sectionFields: 10,
  sectionFieldText: 2_000,
});

/** What one rendered message page may hold: below the hard limits, with room for controls. */
export const PAGE_BUDGET = Object.freeze({
  /** Total characters of all blocks' text on one page (answer split at ~10k). */
  text: 10_000,
  /** Content blocks on one page; the rest is left for the controls. */
  blocks: 45,
  /** One section's text (a little under the 3,000 limit, for the fences a split may add). */
  section: 2_900,
});

/** Escape the three characters Slack's mrkdwn treats as control characters. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
