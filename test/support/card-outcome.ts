/** A card's outcome line as plain text ("Approved by Ana (id U_ANA)"), for comparing in tests. */
import { outcomeText } from "../../src/approvals/approval-card.js";
import type { Card } from "../../src/core/card.js";

export function outcomeLine(card: Card | undefined): string | undefined {
  return card?.outcome && outcomeText(card.outcome);
}
