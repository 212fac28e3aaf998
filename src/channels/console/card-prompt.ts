/**
 * Cards as terminal prompts: render an approval / question / plan card as text, and map a typed
 * answer to one of its buttons. Approvals take [a]pprove / [A]lways / [d]eny (or a number);
 * questions take an option number, or free text that is sent as the reply.
 */
import type { Card, CardBlock, CardButton } from "../../core/card.js";
import type { TerminalWriter } from "./terminal-writer.js";

/** What a typed line means for the card being prompted. */
export type CardAnswer =
  | { readonly kind: "press"; readonly action: string; readonly label: string }
  | { readonly kind: "reply"; readonly text: string }
  | { readonly kind: "invalid"; readonly hint: string };

interface ApprovalKeys {
  readonly a?: CardButton;
  readonly A?: CardButton;
  readonly d?: CardButton;
}

function approvalKeys(card: Card): ApprovalKeys {
  return {
    a: card.buttons.find((button) => button.action === "once"),
    A: card.buttons.find(
      (button) => button.action.startsWith("always") || button.action === "readonly_session",
    ),
    d: card.buttons.find((button) => button.action === "deny"),
  };
}

function blockLines(block: CardBlock): string[] {
  switch (block.kind) {
    case "text":
      return block.text.split("\n");
    case "quote":
      return block.text.split("\n").map((line) => `> ${line}`);
    case "code":
    case "diff":
      return ["```", ...block.text.split("\n"), "```"];
    case "fields":
      return block.fields.map((field) => `${field.label}: ${field.value}`);
  }
}

/** The one-line instruction under a card's buttons. */
export function promptHint(card: Card): string {
  const numbers = card.buttons.length > 0 ? `1-${card.buttons.length}` : "";
  if (card.kind === "approval") {
    const keys = approvalKeys(card);
    const parts = [
      keys.a ? "[a]pprove" : undefined,
      keys.A ? `[A]lways (${keys.A.label})` : undefined,
      keys.d ? "[d]eny" : undefined,
    ].filter((part) => part !== undefined);
    return `${parts.join(" / ")}${parts.length > 0 ? ", or " : ""}${numbers}`;
  }
  if (card.kind === "question") return `type ${numbers ? `${numbers} or ` : ""}a free-text answer`;
  return `type ${numbers}`;
}

/** Print a card with its numbered buttons and the answer hint. */
export function renderCard(writer: TerminalWriter, card: Card): void {
  const bar = writer.style("cyan", "│");
  writer.line(`${writer.style("cyan", "┌")} ${writer.style("bold", card.title)}`);
  for (const line of card.blocks.flatMap(blockLines)) writer.line(`${bar} ${line}`);
  card.buttons.forEach((button, index) => {
    writer.line(`${bar} ${writer.style("bold", `${index + 1})`)} ${button.label}`);
  });
  if (card.footer !== undefined) writer.line(`${bar} ${writer.style("dim", card.footer)}`);
  writer.line(`${writer.style("cyan", "└")} ${promptHint(card)}`);
}

/** Interpret a typed line as an answer to `card`. */
export function parseCardAnswer(card: Card, line: string): CardAnswer {
  const text = line.trim();
  const press = (button: CardButton | undefined): CardAnswer | undefined =>
    button === undefined ? undefined : { kind: "press", action: button.action, label: button.label };
  if (/^\d+$/.test(text)) {
    const chosen = press(card.buttons[Number(text) - 1]);
    return chosen ?? { kind: "invalid", hint: `choose 1-${card.buttons.length}` };
  }
  if (card.kind === "approval") {
    const keys = approvalKeys(card);
    const byKey: Record<string, CardButton | undefined> = {
      a: keys.a,
      approve: keys.a,
      A: keys.A,
      always: keys.A,
      d: keys.d,
      deny: keys.d,
    };
    // Single letters are case-sensitive ("A" is never "a"); words are not.
    const key = text.length === 1 ? text : text.toLowerCase();
    return press(byKey[key]) ?? { kind: "invalid", hint: promptHint(card) };
  }
  if (card.kind === "question" && text !== "") return { kind: "reply", text };
  return { kind: "invalid", hint: promptHint(card) };
}
