/**
 * PendingHub: the life cycle shared by approvals, questions and plans — raise (persist, then post
 * the card), wait (in memory, interruptible, with an expiry timer), settle (first decision wins),
 * update the card, and hand the outcome to the turn waiting in this process. When no turn here
 * waits, settling says so and returns the parked turn: the session layer resumes it. People's
 * replies (presses, typed answers) are resolved in pending-replies.ts; restart recovery here.
 */
import type { Logger } from "pino";
import type { ButtonPress, PressResult } from "../core/button-press.js";
import type { PlatformUser } from "../core/thread-target.js";
import { alreadyDecidedMessage, settledLine } from "./approval-card.js";
import { allowedApproversFor, loosenersFor } from "./authorisation.js";
import { CardDisplay } from "./card-display.js";
import { InflightWork } from "./inflight-work.js";
import { waitingCallOf, waitsFor } from "./parked-turn.js";
import type {
  AskContext,
  Closed,
  ExpirySchedule,
  ParkedLookup,
  PendingHubOptions,
  Settled,
  TextAnswer,
} from "./pending-hub-types.js";
import {
  callHash,
  deliveriesOf,
  isOpen,
  newPendingId,
  type PendingDecision,
  type PendingItem,
  type PendingKind,
  type PendingPerson,
} from "./pending-item.js";
import { PendingReplies } from "./pending-replies.js";
import type { PendingStore } from "./pending-store.js";
import { PendingWaits } from "./pending-waits.js";
import { firstUnanswered } from "./question-card.js";

export type {
  AskContext,
  Closed,
  DeliveryMarks,
  ExpirySchedule,
  ParkedLookup,
  PendingHubOptions,
  Settled,
  TextAnswer,
} from "./pending-hub-types.js";

/** The tool call an item is raised for, when the history does not hold it. */
export interface AskedCall {
  readonly tool: string;
  readonly args: unknown;
}

/** Shared pending-item machinery; one per process. */
export class PendingHub {
  readonly store: PendingStore;
  private readonly waits = new PendingWaits();
  private readonly timers: ExpirySchedule;
  private readonly cards: CardDisplay;
  private readonly inflight = new InflightWork();
  private readonly replies: PendingReplies;
  private readonly logger: Logger;
  private readonly now: () => Date;

  constructor(private readonly options: PendingHubOptions) {
    this.store = options.store;
    this.timers = options.timers;
    this.logger = options.logger;
    this.now = options.now;
    this.cards = new CardDisplay(options.outputFor, this.store, this.logger);
    this.replies = new PendingReplies(this);
  }

  /** The fields every new item shares. */
  base(context: AskContext, callId: string, argsHash: string) {
    const created = this.now();
    return {
      id: newPendingId(),
      sessionId: context.sessionId,
      target: context.target,
      callId,
      argsHash,
      requester: context.requester,
      allowedApprovers: allowedApproversFor(this.options.config, context.target, context.requester.userId),
      mayLoosen: loosenersFor(
        this.options.config,
        context.target,
        (context.startedBy ?? context.requester).userId,
      ),
      createdAt: created.toISOString(),
      expiresAt: new Date(created.getTime() + this.options.config.ttlMs).toISOString(),
      status: "pending" as const,
    };
  }

  /**
   * The settled item for a call: a decision already recorded for this exact call (durable resume)
   * is returned at once; a still-pending one is waited for again without a new card; otherwise a
   * new item is built, persisted, shown and waited for. A pending item for the same call id but
   * different arguments is cancelled as superseded first. The call is identified by the hash of
   * its tool name and arguments as the parked turn's history holds them (`asked` when it does not).
   */
  async obtain(
    kind: PendingKind,
    context: AskContext,
    callId: string,
    asked: AskedCall,
    build: (argsHash: string) => PendingItem,
    signal: AbortSignal,
  ): Promise<PendingItem> {
    const call = waitingCallOf(context.parked, callId) ?? asked;
    const argsHash = callHash(call.tool, call.args);
    const existing = await this.store.forCall(kind, context.sessionId, callId);
    if (existing?.argsHash === argsHash) {
      if (existing.status !== "pending") return existing;
      if (!isOpen(existing, this.now())) return (await this.expire(existing.id))?.item ?? existing;
      return this.wait(existing, signal);
    }
    if (existing?.status === "pending")
      await this.close(existing.id, {
        action: "cancelled",
        note: "superseded by a newer request",
        at: this.stamp(),
      });
    return this.raise(build(argsHash), signal);
  }

  /**
   * Resolve a card button press; `parkedOf` reads the parked turn of the item's session when no
   * turn here waits for it. Refusals change nothing; a press that settles an item no turn here
   * waits for returns the parked turn to resume.
   */
  press(
    press: Extract<ButtonPress, { kind: "card" }>,
    parkedOf: ParkedLookup,
  ): Promise<Settled<PressResult>> {
    return this.inflight.track(this.replies.press(press, parkedOf));
  }

  /**
   * A thread message from the person who was asked answers their open question (or revises their
   * open plan); the result is undefined when it is not consumed that way. See PendingReplies.
   */
  answerText(
    parkedOf: ParkedLookup,
    sessionId: string,
    reply: { readonly platform: string; readonly user: PlatformUser; readonly text: string },
    keys: readonly string[],
  ): Promise<Settled<TextAnswer | undefined>> {
    return this.replies.answerText(parkedOf, sessionId, reply, keys);
  }

  /** Cancel every open item of a session (stop, new session); their cards say why. */
  async cancelSession(sessionId: string, note: string): Promise<number> {
    const open = await this.store.openItems(sessionId);
    let cancelled = 0;
    for (const entry of open)
      if (await this.close(entry.id, { action: "cancelled", note, at: this.stamp() })) cancelled++;
    return cancelled;
  }

  /** Whether the session has an open item (a person is being waited for). */
  async hasOpenItems(sessionId: string): Promise<boolean> {
    return (await this.store.openItems(sessionId)).length > 0;
  }

  /**
   * After a restart: finish settling items a crash interrupted, expire what expired while down,
   * re-arm timers for the rest and show their cards again where cards do not persist. Resolves
   * with the sessions whose parked turns can continue now (an item of theirs settled here).
   */
  async start(): Promise<ReadonlySet<string>> {
    const resumable = new Set<string>();
    for (const entry of await this.store.openItems()) {
      const item = await this.load(entry.id);
      const completed = item && (await this.complete(item));
      if (item && completed?.settled) {
        if (completed.resume) resumable.add(item.sessionId);
        continue;
      }
      if (Date.parse(entry.expiresAt) <= this.now().getTime()) {
        const expired = await this.expire(entry.id);
        if (expired && !expired.claimed) resumable.add(expired.item.sessionId);
      } else {
        this.timers.arm(entry.id, entry.expiresAt);
        if (item) await this.cards.reshow(item);
      }
    }
    return resumable;
  }

  /** Sessions whose turn is parked waiting for a person in this process. */
  waitingSessions(): ReadonlySet<string> {
    return this.waits.sessions();
  }

  /** Resolves once card posts and presses in progress have finished (shutdown). */
  async quiesce(): Promise<void> {
    await this.inflight.settled();
  }

  /** Resolves the next time a turn starts waiting for a person. */
  nextWait(): Promise<void> {
    return this.waits.next();
  }

  /** Stop all expiry timers (shutdown). Parked waits stay parked; their items stay durable. */
  stopTimers(): void {
    this.timers.clearAll();
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
      result: { status: "accepted", message: settledLine(item, "Decided") ?? "Recorded." },
      resume: !claimed,
    };
  }

  /** Record one answer of a question group; the group is decided once every question has one. */
  async answer(
    id: string,
    questionId: string,
    answer: string,
    by: PendingPerson,
    keys?: readonly string[],
  ): Promise<{ readonly result: PressResult; readonly resume: boolean }> {
    const typed = keys && { dedupeKeys: keys, onWin: () => this.recordDeliveries(keys) };
    const { won, item } = await this.store.recordAnswer(id, questionId, answer, by, typed);
    if (!won || item?.kind !== "question")
      return {
        result: { status: "already_decided", message: "That question was already answered." },
        resume: false,
      };
    if (firstUnanswered(item) === undefined)
      return this.decide(id, { action: "answered", by, at: this.stamp() });
    await this.cards.update(item);
    return { result: { status: "accepted", message: "Answer recorded." }, resume: false };
  }

  /**
   * Whether the item's call still waits: in a turn here, else in the session's parked turn (read
   * only then).
   */
  async stillWaiting(item: PendingItem, parkedOf: ParkedLookup): Promise<boolean> {
    const here = this.waits.waitsForCall(item);
    if (here !== undefined) return here;
    const parked = await parkedOf(item.sessionId);
    return parked?.sessionId === item.sessionId && waitsFor(parked, item.callId, item.argsHash);
  }

  /** Why an item can no longer be decided (settled, or past its expiry: expired now). */
  async closedResult(item: PendingItem): Promise<PressResult | undefined> {
    if (item.status === "expired") return { status: "expired", message: "This request expired." };
    if (item.status !== "pending") return { status: "already_decided", message: alreadyDecidedMessage(item) };
    if (isOpen(item, this.now())) return undefined;
    await this.expire(item.id);
    return { status: "expired", message: "This request expired." };
  }

  /** The item as stored now; undefined when unknown or unreadable (logged). */
  async load(id: string): Promise<PendingItem | undefined> {
    try {
      return await this.store.get(id);
    } catch (error) {
      this.logger.error({ err: error, pendingId: id }, "reading a pending item failed");
      return undefined;
    }
  }

  /** Mark a typed reply's dedupe keys as seen. */
  recordDeliveries(keys: readonly string[]): Promise<void> {
    return this.options.deliveries.record(keys);
  }

  /** Now, as stored in decisions. */
  stamp(): string {
    return this.now().toISOString();
  }

  private async raise(item: PendingItem, signal: AbortSignal): Promise<PendingItem> {
    await this.store.create(item);
    // Wait first, so a turn counts as parked at a person as soon as its card can be seen.
    const settled = this.wait(item, signal);
    await this.inflight.track(this.show(item));
    return settled;
  }

  /** Post the card; an item whose card cannot be shown is cancelled. */
  private async show(item: PendingItem): Promise<void> {
    const failure = await this.cards.post(item);
    if (!failure) return;
    this.logger.error({ pendingId: item.id, sessionId: item.sessionId }, failure);
    await this.close(item.id, { action: "cancelled", note: failure, at: this.stamp() });
  }

  private async wait(item: PendingItem, signal: AbortSignal): Promise<PendingItem> {
    const settled = this.waits.add(item);
    this.timers.arm(item.id, item.expiresAt);
    const onAbort = () => {
      // Tracked, so shutdown (quiesce) waits for it before the store closes.
      const closing = this.close(item.id, {
        action: "cancelled",
        note: "the turn was stopped",
        at: this.stamp(),
      });
      void this.inflight.track(
        closing.then(async (closed) =>
          this.release(item.id, closed?.item ?? (await this.load(item.id)) ?? item),
        ),
      );
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    // A press may have settled the item between the caller's read and the waiter's registration.
    const latest = await this.load(item.id);
    if (latest && latest.status !== "pending") this.release(item.id, latest);
    try {
      return await settled;
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }

  /** Settle by the system; returns the item when this call settled it. */
  private async close(id: string, decision: PendingDecision): Promise<Closed | undefined> {
    const { won, item } = await this.store.settle(id, decision);
    if (!won || !item) return undefined;
    return { item, claimed: await this.finish(item) };
  }

  /** Stop the item's timer, update its card and hand it to its turn here; true when one took it. */
  private async finish(item: PendingItem): Promise<boolean> {
    this.timers.clear(item.id);
    await this.cards.update(item);
    return this.release(item.id, item);
  }

  private release(id: string, item: PendingItem): boolean {
    if (!this.waits.has(id)) return false;
    this.timers.clear(id);
    return this.waits.release(id, item);
  }
}
