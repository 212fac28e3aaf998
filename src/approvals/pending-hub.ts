/**
 * PendingHub: the life cycle shared by approvals, questions and plans — raise (persist, then post
 * the card), wait (in memory, interruptible, with an expiry timer), resolve a press (authorise,
 * check it is still the waiting call, first press wins), update the card, and hand the outcome
 * to the waiting turn or, when no turn waits in this process, ask the host to resume the session.
 */
import type { Logger } from "pino";
import type { ButtonPress, PressResult } from "../core/button-press.js";
import type { PlatformUser } from "../core/thread-target.js";
import { alreadyDecidedMessage, settledLine, validActions } from "./approval-card.js";
import { allowedApproversFor, loosenersFor, loosenRefusal, mayDecide } from "./authorisation.js";
import { InflightWork } from "./inflight-work.js";
import { ExpiryTimers } from "./expiry-timers.js";
import { CardDisplay } from "./card-display.js";
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
import type { PendingStore } from "./pending-store.js";
import { firstUnanswered, parseQuestionAction } from "./question-card.js";
import type {
  AskContext,
  PendingHost,
  PendingHubOptions,
  TextAnswer,
  WaitingCall,
  Waiter,
} from "./pending-hub-types.js";

export type {
  AskContext,
  PendingHost,
  PendingHubOptions,
  TextAnswer,
  WaitingCall,
  Waiter,
} from "./pending-hub-types.js";

type CardPress = Extract<ButtonPress, { kind: "card" }>;

/** Shared pending-item machinery; one per process. */
export class PendingHub {
  private readonly waiters = new Map<string, Waiter>();
  private readonly timers: ExpiryTimers;
  private readonly cards: CardDisplay;
  private readonly waitListeners: Array<() => void> = [];
  private readonly inflight = new InflightWork();
  private readonly store: PendingStore;
  private readonly host: PendingHost;
  private readonly logger: Logger;
  private readonly now: () => Date;

  constructor(private readonly options: PendingHubOptions) {
    this.store = options.store;
    this.host = options.host;
    this.logger = options.logger;
    this.now = options.now;
    this.cards = new CardDisplay((target) => this.host.outputFor(target), this.store, this.logger);
    this.timers = new ExpiryTimers(
      this.now,
      (id) => {
        void this.expire(id).catch((err) => this.logger.error({ err, pendingId: id }, "expiry failed"));
      },
      options.claim,
      (err, id) => this.logger.error({ err, pendingId: id }, "expiry claim failed"),
    );
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
   * its tool name and arguments as the history holds them (`fallback` when it is not there).
   */
  async obtain(
    kind: PendingKind,
    context: AskContext,
    callId: string,
    fallback: WaitingCall,
    build: (argsHash: string) => PendingItem,
    signal: AbortSignal,
  ): Promise<PendingItem> {
    const call = (await this.host.waitingCall(context.sessionId, callId)) ?? fallback;
    const argsHash = callHash(call.tool, call.args);
    const existing = await this.store.forCall(kind, context.sessionId, callId);
    if (existing?.argsHash === argsHash) {
      if (existing.status !== "pending") return existing;
      if (!isOpen(existing, this.now())) return (await this.expire(existing.id)) ?? existing;
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

  /** Resolve a card button press. Refusals change nothing. */
  press(press: CardPress): Promise<PressResult> {
    return this.inflight.track(this.resolvePress(press));
  }

  private async resolvePress(press: CardPress): Promise<PressResult> {
    const item = await this.load(press.pendingId);
    if (!item) return { status: "unknown", message: "This request is no longer known." };
    if (!mayDecide(item.allowedApprovers, press.platform, press.user.id))
      return {
        status: "not_allowed",
        message: `Only ${item.requester.name} or a configured approver can decide this.`,
      };
    const closed = await this.closedResult(item);
    if (closed) return closed;
    if (!validActions(item).includes(press.action))
      return { status: "invalid", message: `"${press.action}" is not an option on this card.` };
    const loosening = loosenRefusal(item, press.action, press.platform, press.user.id);
    if (loosening) return { status: "not_allowed", message: loosening };
    if (!(await this.stillWaiting(item)))
      return { status: "invalid", message: "This card is out of date: its call is no longer waiting." };
    const by: PendingPerson = { platform: press.platform, userId: press.user.id, name: press.user.name };
    if (item.kind === "question") {
      const choice = parseQuestionAction(press.action);
      const question = choice && item.questions[choice.question];
      const option = choice && question?.options[choice.option];
      if (!question || option === undefined) return { status: "invalid", message: "Unknown option." };
      return this.answer(item.id, question.id, option, by);
    }
    return this.decide(item.id, { action: press.action, by, at: this.stamp() });
  }

  /**
   * A thread message from the person who was asked answers their open question (or revises their
   * open plan); undefined when it is not consumed that way. Exactly once: the message's dedupe keys
   * are stored with the answer (one write) and recorded as seen right after it, before the item
   * leaves the open index, so a redelivery after a crash is recognised from the item (and the
   * settling the crash interrupted is finished) or from the dedupe marks. A session with nothing
   * open is answered from the in-memory open index, without reading the store.
   */
  async answerText(
    sessionId: string,
    platform: string,
    user: PlatformUser,
    text: string,
    keys: readonly string[],
  ): Promise<TextAnswer | undefined> {
    const open = (await this.store.openItems(sessionId)).filter(
      (e) => e.kind === "question" || e.kind === "plan",
    );
    for (const entry of open) {
      const item = await this.load(entry.id);
      if (!item || item.requester.platform !== platform || item.requester.userId !== user.id) continue;
      if (deliveriesOf(item).some((key) => keys.includes(key))) {
        await this.complete(item);
        return "redelivered";
      }
      if ((await this.closedResult(item)) || !(await this.stillWaiting(item))) continue;
      const by: PendingPerson = { platform, userId: user.id, name: user.name };
      if (item.kind === "plan") {
        const decision = { action: "plan_reject", by, at: this.stamp(), note: text, dedupeKeys: keys };
        await this.decide(item.id, decision, () => this.host.recordDelivery(keys));
        return "answered";
      }
      if (item.kind !== "question") continue;
      const index = firstUnanswered(item);
      const question = index === undefined ? undefined : item.questions[index];
      if (!question) continue;
      await this.answer(item.id, question.id, text, by, keys);
      return "answered";
    }
    return undefined;
  }

  /**
   * Finish settling an item a crash interrupted: the dedupe keys of typed answers it holds are
   * recorded; then a question group whose answers are all stored is decided, and a decided item
   * still in the open index leaves it and its turn resumes. True when the item is settled now.
   */
  private async complete(item: PendingItem): Promise<boolean> {
    const keys = deliveriesOf(item);
    if (keys.length > 0) await this.host.recordDelivery(keys);
    if (item.status !== "pending") {
      if (await this.store.dropOpen(item.id)) await this.finish(item, true);
      return true;
    }
    if (item.kind !== "question" || firstUnanswered(item) !== undefined) return false;
    const by = await this.store.lastAnswerer(item);
    await this.decide(item.id, { action: "answered", ...(by ? { by } : {}), at: this.stamp() });
    return true;
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
   * re-arm timers for the rest and show their cards again where cards do not persist.
   */
  async start(): Promise<void> {
    for (const entry of await this.store.openItems()) {
      const item = await this.load(entry.id);
      if (item && (await this.complete(item))) continue;
      if (Date.parse(entry.expiresAt) <= this.now().getTime()) await this.expire(entry.id);
      else {
        this.timers.arm(entry.id, entry.expiresAt);
        if (item) await this.cards.reshow(item);
      }
    }
  }

  /**
   * Hand the session's items that were settled elsewhere (a press or typed answer taken by another
   * process sharing the store) to the turns waiting for them here.
   */
  async recheckSession(sessionId: string): Promise<void> {
    for (const [id, waiter] of [...this.waiters]) {
      if (waiter.sessionId !== sessionId) continue;
      const item = await this.load(id);
      if (item && item.status !== "pending") this.release(id, item);
    }
  }

  /** Sessions whose turn is parked waiting for a person in this process. */
  waitingSessions(): ReadonlySet<string> {
    return new Set([...this.waiters.values()].map((w) => w.sessionId));
  }

  /** Resolves once card posts and presses in progress have finished (shutdown). */
  async quiesce(): Promise<void> {
    await this.inflight.settled();
  }

  /** Resolves the next time a turn starts waiting for a person. */
  nextWait(): Promise<void> {
    return new Promise((resolve) => this.waitListeners.push(resolve));
  }

  /** Stop all expiry timers (shutdown). Parked waits stay parked; their items stay durable. */
  stopTimers(): void {
    this.timers.clearAll();
  }

  /** Settle an item as expired; returns it when this call expired it. */
  async expire(id: string): Promise<PendingItem | undefined> {
    return this.close(id, { action: "expired", at: this.stamp() }, true);
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
    const settled = new Promise<PendingItem>((resolve) => {
      this.waiters.set(item.id, {
        callId: item.callId,
        argsHash: item.argsHash,
        sessionId: item.sessionId,
        resolve,
      });
    });
    for (const listener of this.waitListeners.splice(0)) listener();
    this.timers.arm(item.id, item.expiresAt);
    const onAbort = () => {
      // Tracked, so shutdown (quiesce) waits for it before the store closes.
      const closing = this.close(item.id, {
        action: "cancelled",
        note: "the turn was stopped",
        at: this.stamp(),
      });
      void this.inflight.track(
        closing.then(async (closed) => this.release(item.id, closed ?? (await this.load(item.id)) ?? item)),
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

  private async decide(
    id: string,
    decision: PendingDecision,
    onWin?: () => Promise<void>,
  ): Promise<PressResult> {
    const { won, item } = await this.store.settle(id, decision, onWin);
    if (!won || !item) return { status: "already_decided", message: alreadyDecidedMessage(item) };
    await this.finish(item, true);
    return { status: "accepted", message: settledLine(item, "Decided") ?? "Recorded." };
  }

  private async answer(
    id: string,
    questionId: string,
    answer: string,
    by: PendingPerson,
    keys?: readonly string[],
  ): Promise<PressResult> {
    const typed = keys && { dedupeKeys: keys, onWin: () => this.host.recordDelivery(keys) };
    const { won, item } = await this.store.recordAnswer(id, questionId, answer, by, typed);
    if (!won || item?.kind !== "question")
      return { status: "already_decided", message: "That question was already answered." };
    if (firstUnanswered(item) === undefined)
      return this.decide(id, { action: "answered", by, at: this.stamp() });
    await this.cards.update(item);
    return { status: "accepted", message: "Answer recorded." };
  }

  /** Settle by the system; returns the item when this call settled it. */
  private async close(
    id: string,
    decision: PendingDecision,
    resume = false,
  ): Promise<PendingItem | undefined> {
    const { won, item } = await this.store.settle(id, decision);
    if (!won || !item) return undefined;
    await this.finish(item, resume);
    return item;
  }

  private async finish(item: PendingItem, resume: boolean): Promise<void> {
    this.timers.clear(item.id);
    await this.cards.update(item);
    if (this.waiters.has(item.id)) this.release(item.id, item);
    else if (resume) this.host.resume(item.sessionId);
  }

  private release(id: string, item: PendingItem): void {
    const waiter = this.waiters.get(id);
    if (!waiter) return;
    this.waiters.delete(id);
    this.timers.clear(id);
    waiter.resolve(item);
  }

  private async stillWaiting(item: PendingItem): Promise<boolean> {
    const waiter = this.waiters.get(item.id);
    if (waiter) return waiter.callId === item.callId && waiter.argsHash === item.argsHash;
    const call = await this.host.waitingCall(item.sessionId, item.callId);
    return call !== undefined && callHash(call.tool, call.args) === item.argsHash;
  }

  private async closedResult(item: PendingItem): Promise<PressResult | undefined> {
    if (item.status === "expired") return { status: "expired", message: "This request expired." };
    if (item.status !== "pending") return { status: "already_decided", message: alreadyDecidedMessage(item) };
    if (isOpen(item, this.now())) return undefined;
    await this.expire(item.id);
    return { status: "expired", message: "This request expired." };
  }

  private async load(id: string): Promise<PendingItem | undefined> {
    try {
      return await this.store.get(id);
    } catch (error) {
      this.logger.error({ err: error, pendingId: id }, "reading a pending item failed");
      return undefined;
    }
  }

  private stamp(): string {
    return this.now().toISOString();
  }
}
