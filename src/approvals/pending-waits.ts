/**
 * PendingWaits: the turns of this process parked at a person, keyed by pending item id. A turn
 * registers before its card can be seen and is released with the settled item; whoever settles
 * an item learns whether a turn here took the outcome or the parked turn must be resumed. Only
 * memory: the durable side of a wait is the item (pending store) and the parked turn.
 */
import type { PendingItem } from "./pending-item.js";

/** A turn in this process waiting for an item's outcome. */
interface Waiter {
  readonly callId: string;
  readonly argsHash: string;
  readonly sessionId: string;
  readonly resolve: (item: PendingItem) => void;
}

/** In-process waits for pending items. */
export class PendingWaits {
  private readonly waiters = new Map<string, Waiter>();
  private readonly listeners: Array<() => void> = [];

  /** Park a turn at `item`; resolves with the item once it is released settled. */
  add(item: PendingItem): Promise<PendingItem> {
    const settled = new Promise<PendingItem>((resolve) => {
      this.waiters.set(item.id, {
        callId: item.callId,
        argsHash: item.argsHash,
        sessionId: item.sessionId,
        resolve,
      });
    });
    for (const listener of this.listeners.splice(0)) listener();
    return settled;
  }

  /** Hand the settled item to the turn waiting for it; false when no turn here waits for it. */
  release(id: string, item: PendingItem): boolean {
    const waiter = this.waiters.get(id);
    if (!waiter) return false;
    this.waiters.delete(id);
    waiter.resolve(item);
    return true;
  }

  /** Whether a turn here waits for the item. */
  has(id: string): boolean {
    return this.waiters.has(id);
  }

  /** Whether a turn here waits for the item's exact call; undefined when none waits for the item. */
  waitsForCall(item: PendingItem): boolean | undefined {
    const waiter = this.waiters.get(item.id);
    return waiter && waiter.callId === item.callId && waiter.argsHash === item.argsHash;
  }

  /** The ids of the items the session's turn waits for here. */
  idsFor(sessionId: string): string[] {
    return [...this.waiters].filter(([, waiter]) => waiter.sessionId === sessionId).map(([id]) => id);
  }

  /** Sessions whose turn is parked at a person in this process. */
  sessions(): ReadonlySet<string> {
    return new Set([...this.waiters.values()].map((w) => w.sessionId));
  }

  /** Resolves the next time a turn starts waiting. */
  next(): Promise<void> {
    return new Promise((resolve) => this.listeners.push(resolve));
  }
}
