/**
 * Item cards: a person's standing items (scheduled tasks, channel subscriptions) listed by a
 * thread command, one card each with a Cancel button. The module that owns an item kind registers
 * an ItemCanceller that knows its items' ids whole (never by how they start: a pending card's
 * random id may start like "tsk_", and its presses must reach the approvals); a press is routed
 * to it (it decides who may cancel: the item's owner, or an approver), and an accepted cancel
 * marks the card "Cancelled by …". Cards
 * posted by this process are remembered (in memory) so they can be updated; a press on an older
 * card (from before a restart) still cancels, but that card keeps its button.
 */
import type { Card, CardRef } from "../core/card.js";
import type { ButtonPress, PressResult } from "../core/button-press.js";
import type { PlatformUser, ThreadTarget } from "../core/thread-target.js";
import type { ThreadOutput } from "../core/thread-output.js";
import { decidedOutcome } from "../approvals/approval-card.js";
import { LruCache } from "../core/lru-cache.js";

/** One standing item to list with a Cancel button. */
export interface ListedItem {
  /** The item's id (≤ 24 characters), one its canceller's `isItem` accepts. */
  readonly id: string;
  readonly title: string;
  readonly text: string;
}

/** How a module cancels its items. */
export interface ItemCanceller {
  /** Whether `id` is, whole, one of this module's item ids (not merely starting like one). */
  isItem(id: string): boolean;
  /**
   * Cancel for `user` (who must own the item, or be an approver), pressed in `target`'s
   * conversation (a shared one is not shown where a private item was); the reply to show.
   */
  cancel(target: ThreadTarget, user: PlatformUser, id: string): Promise<{ ok: boolean; message: string }>;
}

const CANCEL = "cancel";
const REMEMBERED_CARDS = 2_000;

interface Posted {
  readonly target: ThreadTarget;
  readonly ref: CardRef;
  readonly card: Card;
}

/** The card of one listed item. */
export function itemCard(item: ListedItem): Card {
  return {
    pendingId: item.id,
    kind: "item",
    title: item.title,
    blocks: [{ kind: "text", text: item.text }],
    buttons: [{ action: CANCEL, label: "Cancel", style: "danger" }],
  };
}

/** Posts item cards and routes their Cancel presses to the owning module. */
export class ItemCards {
  private readonly posted = new LruCache<string, Posted>(REMEMBERED_CARDS);

  constructor(
    private readonly cancellers: readonly ItemCanceller[],
    private readonly outputFor: (target: ThreadTarget) => ThreadOutput | undefined,
  ) {}

  /** Whether a card press is for an item card (a registered canceller knows its id whole). */
  owns(pendingId: string): boolean {
    return this.cancellerOf(pendingId) !== undefined;
  }

  /** Post one card per item into the thread. */
  async post(target: ThreadTarget, items: readonly ListedItem[]): Promise<void> {
    const output = this.outputFor(target);
    if (!output) return;
    for (const item of items) {
      const card = itemCard(item);
      const ref = await output.postCard(card);
      this.posted.set(item.id, { target, ref, card });
    }
  }

  /** A press on an item card: cancel through the owner module and mark the card. */
  async press(press: Extract<ButtonPress, { kind: "card" }>): Promise<PressResult> {
    const canceller = this.cancellerOf(press.pendingId);
    if (!canceller || press.action !== CANCEL)
      return { status: "invalid", message: "That button is not valid." };
    const outcome = await canceller.cancel(press.pressedIn, press.user, press.pendingId);
    if (!outcome.ok) return { status: "not_allowed", message: outcome.message };
    const posted = this.posted.get(press.pendingId);
    if (posted) {
      const output = this.outputFor(posted.target);
      const decided: Card = {
        ...posted.card,
        buttons: [],
        outcome: decidedOutcome("Cancelled by ", {
          platform: press.platform,
          id: press.user.id,
          name: press.user.name || press.user.id,
        }),
      };
      await output?.updateCard(posted.ref, decided);
      this.posted.delete(press.pendingId);
    }
    return { status: "accepted", message: outcome.message };
  }

  private cancellerOf(id: string): ItemCanceller | undefined {
    return this.cancellers.find((c) => c.isItem(id));
  }
}
