/**
 * CardDisplay: shows pending items in their threads — renders the right card for an item, posts
 * it and stores its ref, and updates it after every change. Channel failures are logged, never
 * thrown at the turn.
 */
import type { Logger } from "pino";
import type { ThreadOutput } from "../core/thread-output.js";
import type { ThreadTarget } from "../core/thread-target.js";
import { approvalCard, approvalOutcome, outcomeText, planCard, planOutcome } from "./approval-card.js";
import type { Card, CardOutcome } from "../core/card.js";
import type { PendingItem } from "./pending-item.js";
import type { PendingStore } from "./pending-store.js";
import { questionCard, questionOutcome } from "./question-card.js";

/** The card for any pending item. */
export function cardFor(item: PendingItem): Card {
  switch (item.kind) {
    case "approval":
      return approvalCard(item);
    case "question":
      return questionCard(item);
    case "plan":
      return planCard(item);
  }
}

/**
 * What a person is told of a settled item: its card's outcome line in plain text ("Denied by Ana
 * (id U0123)", "Approved by Ana (id U0123) — always for …"), made by the same function the card
 * uses, without building the card, so a typed decision reads as its card does; undefined while it
 * is open.
 */
export function outcomeOf(item: PendingItem): string | undefined {
  const outcome = cardOutcomeOf(item);
  return outcome && outcomeText(outcome);
}

function cardOutcomeOf(item: PendingItem): CardOutcome | undefined {
  switch (item.kind) {
    case "approval":
      return approvalOutcome(item);
    case "question":
      return questionOutcome(item);
    case "plan":
      return planOutcome(item);
  }
}

/** The refusal text for a press on an item that was already decided. */
export function alreadyDecidedMessage(item: PendingItem | undefined): string {
  const outcome = item && outcomeOf(item);
  return outcome ? `Already decided: ${outcome}.` : "Already decided.";
}

/** Posts and updates cards through the thread outputs. */
export class CardDisplay {
  constructor(
    private readonly outputFor: (target: ThreadTarget) => ThreadOutput | undefined,
    private readonly store: PendingStore,
    private readonly logger: Logger,
  ) {}

  /** Post the item's card and store its ref; resolves with why it could not be shown, if so. */
  async post(item: PendingItem): Promise<string | undefined> {
    const output = this.outputFor(item.target);
    if (!output) return `no output is registered for platform "${item.target.platform}"`;
    try {
      const withRef = await this.store.setCardRef(item.id, await output.postCard(cardFor(item)));
      // Decided while the card was being posted: the decision could not update it yet.
      if (withRef && withRef.status !== "pending") await this.update(withRef);
      return undefined;
    } catch (error) {
      this.logger.error({ err: error, pendingId: item.id }, "posting a card failed");
      return "the card could not be posted";
    }
  }

  /** After a restart: show a pending item's card again where cards do not persist (the console). */
  async reshow(item: PendingItem): Promise<void> {
    const output = this.outputFor(item.target);
    if (!output?.reshowCard) return;
    try {
      await this.store.setCardRef(item.id, await output.reshowCard(cardFor(item)));
    } catch (error) {
      this.logger.warn({ err: error, pendingId: item.id }, "showing a card again failed");
    }
  }

  /** Show the item's current state on its posted card (no-op when it has none). */
  async update(item: PendingItem): Promise<void> {
    const output = this.outputFor(item.target);
    if (!output || !item.cardRef) return;
    try {
      await output.updateCard(item.cardRef, cardFor(item));
    } catch (error) {
      this.logger.warn({ err: error, pendingId: item.id }, "updating a card failed");
    }
  }
}
