/**
 * Cards as terminal prompts: the shared card view (channels/shared/card-view.ts) printed as text
 * (its markdown blocks as plain text) with numbered buttons, and a typed line mapped to one of them. Approvals take [a]pprove /
 * [A]lways / [d]eny (or a number); questions take an option number, or free text that is sent
 * as the reply.
 */
import type { Card, CardButton } from "../../core/card.js";
import { type CardBlockFormat, type CardView, cardView, formatCardBlock } from "../shared/card-view.js";
import { markdownToTerminalText } from "./console-text.js";
import type { TerminalWriter } from "./terminal-writer.js";

/** What a typed line means for the card being prompted. */
export type CardAnswer =
  | { readonly kind: "press"; readonly action: string; readonly label: string }
  | { readonly kind: "reply"; readonly text: string }
  | { readonly kind: "invalid"; readonly hint: string };

/** Body blocks as terminal lines. */
const TERMINAL_LINES: CardBlockFormat<string[]> = {
  text: (text) => markdownToTerminalText(text).split("\n"),
  quote: (text) => text.split("\n").map((line) => `> ${line}`),
  code: (text) => ["```", ...text.split("\n"), "```"],
  fields: (fields) => fields.map((field) => `${field.label}: ${field.value}`),
};

/** The one-line instruction under a card's buttons. */
function promptHint(view: CardView): string {
  const numbers = view.buttons.length > 0 ? `1-${view.buttons.length}` : "";
  if (view.kind === "approval") {
    const parts = [
      view.keys.approve ? "[a]pprove" : undefined,
      view.keys.always ? `[A]lways (${view.keys.always.label})` : undefined,
      view.keys.deny ? "[d]eny" : undefined,
    ].filter((part) => part !== undefined);
    return `${parts.join(" / ")}${parts.length > 0 ? ", or " : ""}${numbers}`;
  }
  if (view.kind === "question") return `type ${numbers ? `${numbers} or ` : ""}a free-text answer`;
  return `type ${numbers}`;
}

/** Print a card with its numbered buttons and the answer hint. */
export function renderCard(writer: TerminalWriter, card: Card): void {
  const view = cardView(card);
  const bar = writer.style("cyan", "│");
  writer.line(`${writer.style("cyan", "┌")} ${writer.style("bold", view.title)}`);
  for (const line of view.blocks.flatMap((block) => formatCardBlock(block, TERMINAL_LINES))) {
    writer.line(`${bar} ${line}`);
  }
  view.buttons.forEach((button, index) => {
    writer.line(`${bar} ${writer.style("bold", `${index + 1})`)} ${button.label}`);
  });
  if (view.footer !== undefined) writer.line(`${bar} ${writer.style("dim", view.footer)}`);
  writer.line(`${writer.style("cyan", "└")} ${promptHint(view)}`);
}

/** Interpret a typed line as an answer to `card`. */
export function parseCardAnswer(card: Card, line: string): CardAnswer {
  const view = cardView(card);
  const text = line.trim();
  const press = (button: CardButton | undefined): CardAnswer | undefined =>
    button === undefined ? undefined : { kind: "press", action: button.action, label: button.label };
  if (/^\d+$/.test(text)) {
    const chosen = press(view.buttons[Number(text) - 1]);
    return chosen ?? { kind: "invalid", hint: `choose 1-${view.buttons.length}` };
  }
  if (view.kind === "approval") {
    const { approve, always, deny } = view.keys;
    const byKey: Record<string, CardButton | undefined> = {
      a: approve,
      approve,
      A: always,
      always,
      d: deny,
      deny,
    };
    // Single letters are case-sensitive ("A" is never "a"); words are not.
    const key = text.length === 1 ? text : text.toLowerCase();
    return press(byKey[key]) ?? { kind: "invalid", hint: promptHint(view) };
  }
  if (view.kind === "question" && text !== "") return { kind: "reply", text };
  return { kind: "invalid", hint: promptHint(view) };
}
