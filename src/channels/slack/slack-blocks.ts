/**
 * Block Kit building blocks shared by the turn renderer and the cards: typed constructors that
 * clamp text to Slack's limits, the action ids this app listens for, and the codec of a card
 * button's value (only the pending id and the action travel in it).
 */
import { clip } from "../../core/surrogate-pairs.js";
import type { types } from "@slack/bolt";
import { z } from "zod";
import { escapeMrkdwn, SLACK_LIMITS } from "./slack-limits.js";

export type Block = types.KnownBlock;
export type ButtonElement = types.Button;

/** Action ids (Bolt matches on them). Card buttons carry their index: coworker_card_0, _1, … */
export const ACTION_IDS = Object.freeze({
  cardPrefix: "coworker_card_",
  stop: "coworker_stop",
  retry: "coworker_retry",
});
export const CARD_ACTION_PATTERN = /^coworker_card_\d+$/;

/** A section of mrkdwn text (cut to the section limit). */
export function section(mrkdwn: string): types.SectionBlock {
  return { type: "section", text: { type: "mrkdwn", text: clip(mrkdwn, SLACK_LIMITS.sectionText) } };
}

/** A section of two-column fields. */
export function fieldsSection(fields: readonly { label: string; mrkdwn: string }[]): types.SectionBlock {
  return {
    type: "section",
    fields: fields.slice(0, SLACK_LIMITS.sectionFields).map((field) => ({
      type: "mrkdwn" as const,
      text: clip(`*${escapeMrkdwn(field.label)}*\n${field.mrkdwn}`, SLACK_LIMITS.sectionFieldText),
    })),
  };
}

/** Small grey text (one element). */
export function context(mrkdwn: string): types.ContextBlock {
  return {
    type: "context",
    elements: [{ type: "mrkdwn", text: clip(mrkdwn, SLACK_LIMITS.sectionText) }],
  };
}

/** One button; the label is cut to 75 characters. */
export function button(
  actionId: string,
  label: string,
  value: string,
  style?: "primary" | "danger",
): ButtonElement {
  const element: ButtonElement = {
    type: "button",
    action_id: actionId,
    text: { type: "plain_text", text: clip(label, SLACK_LIMITS.buttonText), emoji: true },
    value,
  };
  if (style) element.style = style;
  return element;
}

/** Buttons as actions blocks of at most 25 elements each. */
export function actions(buttons: readonly ButtonElement[], blockIdPrefix: string): types.ActionsBlock[] {
  const out: types.ActionsBlock[] = [];
  for (let i = 0; i < buttons.length; i += SLACK_LIMITS.actionsElements) {
    out.push({
      type: "actions",
      block_id: `${blockIdPrefix}_${i / SLACK_LIMITS.actionsElements}`,
      elements: buttons.slice(i, i + SLACK_LIMITS.actionsElements),
    });
  }
  return out;
}

const cardValueSchema = z.strictObject({ p: z.string().min(1).max(64), a: z.string().min(1).max(64) });

/** The value of a card button: `{"p": pendingId, "a": action}`. */
export function encodeCardValue(pendingId: string, action: string): string {
  return JSON.stringify({ p: pendingId, a: action });
}

/** Parse a card button's value; undefined when it is not one of ours. */
export function decodeCardValue(
  value: string | undefined,
): { pendingId: string; action: string } | undefined {
  if (value === undefined || value.length > SLACK_LIMITS.buttonValue) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    return undefined;
  }
  const parsed = cardValueSchema.safeParse(json);
  return parsed.success ? { pendingId: parsed.data.p, action: parsed.data.a } : undefined;
}

/** The total text a block carries (what Slack counts towards msg_blocks_too_long). */
export function blockTextLength(block: Block): number {
  switch (block.type) {
    case "section":
      return (block.text?.text.length ?? 0) + (block.fields ?? []).reduce((n, f) => n + f.text.length, 0);
    case "context":
      return block.elements.reduce(
        (n, e) => n + ("text" in e && typeof e.text === "string" ? e.text.length : 0),
        0,
      );
    case "markdown":
      return block.text.length;
    case "header":
      return block.text.text.length;
    default:
      return 0;
  }
}
