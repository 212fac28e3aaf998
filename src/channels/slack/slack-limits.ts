/**
 * Slack's documented (and a few observed) payload limits, in one place, plus the small text
 * helpers that keep strings inside them. Lengths are JavaScript string lengths (UTF-16 units).
 */
import { cutBeforeCharacter } from "../../core/surrogate-pairs.js";

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

const ELLIPSIS = "…";

/** Cut `text` to at most `max` characters, ending in an ellipsis when cut; never splits a surrogate pair. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= 0) return "";
  const end = cutBeforeCharacter(text, Math.max(0, max - ELLIPSIS.length));
  return text.slice(0, end) + ELLIPSIS;
}

/** Escape the three characters Slack's mrkdwn treats as control characters. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
