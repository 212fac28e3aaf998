/**
 * PendingSettler: settling pending items — a person's decision or answer, the system's expiry or
 * cancellation, and finishing what a crash interrupted. The first decision wins (the store's
 * set-if-absent); the winner updates the card, stops the timer and hands the item to the turn
 * waiting in this process, and says when none took it: then the parked turn must be resumed.
 */
import type { Logger } from "pino";
import type { Attachment } from "../core/attachment.js";
import type { PressResult } from "../core/button-press.js";
import { StoredDataError } from "../store/versioned.js";
import { alreadyDecidedMessage, type CardDisplay, outcomeOf } from "./card-display.js";
import { waitsFor } from "./parked-turn.js";
import type { Closed, DeliveryMarks, ExpirySchedule, ParkedLookup } from "./pending-hub-types.js";
import {
  deliveriesOf,
  isOpen,
  type PendingDecision,
  type PendingItem,
  type PendingPerson,
} from "./pending-item.js";
import type { PendingStore } from "./pending-store.js";
import type { PendingWaits } from "./pending-waits.js";
import { firstUnanswered } from "./question-card.js";

export interface PendingSettlerOptions {
  readonly store: PendingStore;
  readonly waits: PendingWaits;
  readonly timers: ExpirySchedule;
  readonly cards: CardDisplay;
  readonly deliveries: DeliveryMarks;
  readonly logger: Logger;
  readonly now: () => Date;
  /** Whether this process holds the session (PendingHubOptions.holdsSession); default: always. */
  readonly holdsSession?: ((sessionId: string) => boolean) | undefined;
}

/** Settles items; shared by the hub, people's replies and restart recovery. */
export class PendingSettler {
  readonly store: PendingStore;

  constructor(private readonly options: PendingSettlerOptions) {
    this.store = options.store;
  }

  /** Cancel every open item of a session (stop, new session); their cards say why. */
  async cancelSession(sessionId: string, note: string): Promise<number> {
    const open = await this.store.openItems(sessionId);
    let cancelled = 0;
    for (const entry of open)
      if (await this.close(entry.id, { action: "cancelled", note, at: this.stamp() })) cancelled++;
    return cancelled;
  }

  /** Settle an item as expired; returns it when this call expired it (its timer ran out). */
  expire(id: string): Promise<Closed | undefined> {
    return this.close(id, { action: "expired", at: this.stamp() });
  }

  /**
   * Finish settling an item a crash interrupted: the dedupe keys of typed answers it holds are
   * recorded; then a question group whose answers are all stored is decided, and a decided item
   * still in the open index leaves it. `settled` when the item is settled now; `resume` when that
   * happened here and no turn in this process took the outcome.
   */
  async complete(item: PendingItem): Promise<{ readonly settled: boolean; readonly resume: boolean }> {
    const keys = deliveriesOf(item);
    if (keys.length > 0) await this.recordDeliveries(keys);
    if (item.status !== "pending") {
      const dropped = await this.store.dropOpen(item.id);
      return { settled: true, resume: dropped && !(await this.finish(item)) };
    }
    if (item.kind !== "question" || firstUnanswered(item) !== undefined)
      return { settled: false, resume: false };
    const by = await this.store.lastAnswerer(item);
    const { resume } = await this.decide(item.id, {
      action: "answered",
      ...(by ? { by } : {}),
      at: this.stamp(),
    });
    return { settled: true, resume };
  }

  /**
   * Record a person's decision; `resume` is true when it won and no turn here took the outcome.
   * `onWin` runs right after the decision's write (a typed decision's dedupe marks).
   */
  async decide(
    id: string,
    decision: PendingDecision,
    onWin?: () => Promise<void>,
  ): Promise<{ readonly result: PressResult; readonly resume: boolean }> {
    const { won, item } = await this.store.settle(id, decision, onWin);
    if (!won || !item)
      return { result: { status: "already_decided", message: alreadyDecidedMessage(item) }, resume: false };
    const claimed = await this.finish(item);
    return {
      result: { status: "accepted", message: outcomeOf(item) ?? "Recorded." },
      resume: !claimed,
    };
  }

  /**
   * Record one answer of a question group (a typed one with its message's dedupe keys and the
   * files it came with); the group is decided once every question has one. `won` is false when
   * another answer to that question was recorded first (this one is not).
   */
  async answer(
    id: string,
    questionId: string,
    answer: string,
    by: PendingPerson,
    typed?: { readonly keys: readonly string[]; readonly files: readonly Attachment[] },
  ): Promise<{ readonly result: PressResult; readonly resume: boolean; readonly won: boolean }> {
    const delivery = typed && {
      dedupeKeys: typed.keys,
      files: typed.files,
      onWin: () => this.recordDeliveries(typed.keys),
    };
    const { won, item } = await this.store.recordAnswer(id, questionId, answer, by, delivery);
    if (!won || item?.kind !== "question")
      return {
        result: { status: "already_decided", message: "That question was already answered." },
        resume: false,
        won: false,
      };
    if (firstUnanswered(item) === undefined)
      return { ...(await this.decide(id, { action: "answered", by, at: this.stamp() })), won: true };
    await this.options.cards.update(item);
    return { result: { status: "accepted", message: "Answer recorded." }, resume: false, won: true };
  }

  /**
   * Whether the item's call still waits: in a turn here, else in the session's parked turn (read
   * only then).
   */
  async stillWaiting(item: PendingItem, parkedOf: ParkedLookup): Promise<boolean> {
    const here = this.holds(item.sessionId) ? this.options.waits.waitsForCall(item) : undefined;
    if (here !== undefined) return here;
    const parked = await parkedOf(item.sessionId);
    return parked?.sessionId === item.sessionId && waitsFor(parked, item.callId, item.argsHash);
  }

  /**
   * Why an item can no longer be decided (settled, or past its expiry: expired now). `resume` when
   * this call expired it and no turn here took the outcome, as when its timer expires it.
   */
  async closedResult(
    item: PendingItem,
  ): Promise<{ readonly result: PressResult; readonly resume: boolean } | undefined> {
    const expired: PressResult = { status: "expired", message: "This request expired." };
    if (item.status === "expired") return { result: expired, resume: false };
    if (item.status !== "pending")
      return { result: { status: "already_decided", message: alreadyDecidedMessage(item) }, resume: false };
    if (this.isOpenNow(item)) return undefined;
    const closed = await this.expire(item.id);
    return { result: expired, resume: closed !== undefined && !closed.claimed };
  }

  /** Whether the item can still be decided now (pending, not past its expiry); changes nothing. */
  isOpenNow(item: PendingItem): boolean {
    return isOpen(item, this.options.now());
  }

  /** The item as stored now; undefined when unknown or unreadable (logged). */
  async load(id: string): Promise<PendingItem | undefined> {
    const item = await this.read(id);
    return item === "unreadable" ? undefined : item;
  }

  /**
   * The item as stored now (undefined when unknown, or its read failed: logged); "unreadable"
   * when its record cannot be read — a newer version's, or corrupt (logged) — which must be said
   * as such, never taken for an item that is gone.
   */
  async read(id: string): Promise<PendingItem | "unreadable" | undefined> {
    try {
      return await this.store.get(id);
    } catch (error) {
      const unreadable = error instanceof StoredDataError;
      this.options.logger.error(
        { err: error, pendingId: id },
        unreadable ? "a pending item's record cannot be read" : "reading a pending item failed",
      );
      return unreadable ? "unreadable" : undefined;
    }
  }

  /** Mark a typed reply's dedupe keys as seen. */
  recordDeliveries(keys: readonly string[]): Promise<void> {
    return this.options.deliveries.record(keys);
  }

  /** Now, as stored in decisions. */
  stamp(): string {
    return this.options.now().toISOString();
  }

  /** Settle by the system; returns the item when this call settled it. */
  async close(id: string, decision: PendingDecision): Promise<Closed | undefined> {
    const { won, item } = await this.store.settle(id, decision);
    if (!won || !item) return undefined;
    return { item, claimed: await this.finish(item) };
  }

  /**
   * Stop the item's timer, update its card and hand it to its turn here; true when one took it. A
   * turn here for a session this process no longer holds (its lease was lost, another process
   * took the session over and waits on the same item) is stale: it does not take the outcome, so
   * the caller resumes the session where it is held.
   */
  private async finish(item: PendingItem): Promise<boolean> {
    this.options.timers.clear(item.id);
    await this.options.cards.update(item);
    if (!this.holds(item.sessionId)) return false;
    return this.release(item.id, item);
  }

  /** Whether this process holds the session (always, with one process). */
  private holds(sessionId: string): boolean {
    return this.options.holdsSession?.(sessionId) ?? true;
  }

  /** Hand a settled item to its turn here (after a stop, or a press that came first); true when one took it. */
  release(id: string, item: PendingItem): boolean {
    if (!this.options.waits.has(id)) return false;
    this.options.timers.clear(id);
    return this.options.waits.release(id, item);
  }
}
