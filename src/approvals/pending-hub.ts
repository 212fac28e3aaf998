/**
 * PendingHub: the life cycle shared by approvals, questions and plans, one per process — raise
 * (persist, then post the card), wait (in memory, interruptible, with an expiry timer), take
 * people's replies (pending-replies.ts) and settle (pending-settler.ts: first decision wins, the
 * card is updated, the turn waiting here gets the outcome), and recover after a restart. When no
 * turn here waits, the result says so with the parked turn: the session layer resumes it. The
 * hub never calls back into the session layer.
 */
import type { Logger } from "pino";
import type { ButtonPress, PressResult } from "../core/button-press.js";
import type { ThreadTarget } from "../core/thread-target.js";
import {
  allowedApproversFor,
  decidersOf,
  loosenersFor,
  steeringDecidersFor,
  whoMayDecide,
} from "./authorisation.js";
import { CardDisplay } from "./card-display.js";
import { InflightWork } from "./inflight-work.js";
import { waitingCallOf } from "./parked-turn.js";
import type {
  AskContext,
  Closed,
  ExpirySchedule,
  ParkedLookup,
  PendingHubOptions,
  Settled,
  TextAnswer,
} from "./pending-hub-types.js";
import { callHash, isOpen, newPendingId, type PendingItem, type PendingKind } from "./pending-item.js";
import { PendingReplies, type TypedReply } from "./pending-replies.js";
import { PendingSettler } from "./pending-settler.js";
import { NOT_SHOWN, type PendingStore } from "./pending-store.js";
import { PendingWaits } from "./pending-waits.js";

/** The tool call an item is raised for, when the history does not hold it. */
export interface AskedCall {
  readonly tool: string;
  readonly args: unknown;
}

/** Shared pending-item machinery; one per process. */
export class PendingHub {
  private readonly store: PendingStore;
  private readonly waits = new PendingWaits();
  private readonly timers: ExpirySchedule;
  private readonly cards: CardDisplay;
  private readonly settler: PendingSettler;
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
    this.settler = new PendingSettler({
      store: this.store,
      waits: this.waits,
      timers: this.timers,
      cards: this.cards,
      deliveries: options.deliveries,
      logger: this.logger,
      now: this.now,
      holdsSession: options.holdsSession,
    });
    this.replies = new PendingReplies(this.settler, options.config);
  }

  /** Who may approve a change that steers every later session, raised in `target` (authorisation.ts). */
  steeringDeciders(target: ThreadTarget, looseners: readonly string[]): readonly string[] {
    return steeringDecidersFor(this.options.config, target.platform, looseners);
  }

  /** The fields every new item shares. */
  base(context: AskContext, callId: string, argsHash: string) {
    const created = this.now();
    return {
      id: newPendingId(),
      sessionId: context.sessionId,
      target: context.target,
      callId,
      ...(context.parked ? { turnId: context.parked.turnId } : {}),
      argsHash,
      requester: context.requester,
      allowedApprovers: allowedApproversFor(this.options.config, context.target, context.requester.userId),
      mayLoosen: loosenersFor(this.options.config, context.target, context.startedBy?.userId),
      ...(context.startedBy ? { startedBy: context.startedBy } : {}),
      createdAt: created.toISOString(),
      expiresAt: new Date(created.getTime() + this.options.config.ttlMs).toISOString(),
      status: "pending" as const,
    };
  }

  /**
   * The settled item for a call: a decision already recorded for this exact call (durable resume)
   * is returned at once; a still-pending one is waited for again without a new card; otherwise a
   * new item is built, persisted, shown and waited for. A pending item for the same call id but
   * different arguments is cancelled as superseded first. Only the asking turn's items count
   * (PendingStore.forCall): a model reusing an earlier turn's call id is asked again. The call is identified by the hash of
   * its tool name and arguments as the parked turn's history holds them (`asked` when it does not).
   * A new item nobody may decide (a steering change without a configured approver) is raised to
   * nobody: no card nobody can press, no turn parked until it expires — the call gets why at once,
   * as an error the model acts on (it tells the person), like a card that could not be shown.
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
    const existing = await this.store.forCall(kind, context.sessionId, callId, context.parked);
    if (existing?.argsHash === argsHash) {
      if (existing.status !== "pending") return existing;
      if (!isOpen(existing, this.now())) return (await this.settler.expire(existing.id))?.item ?? existing;
      return this.wait(existing, signal);
    }
    if (existing?.status === "pending")
      await this.settler.close(existing.id, {
        action: "cancelled",
        note: "superseded by a newer request",
        at: this.settler.stamp(),
      });
    const item = build(argsHash);
    if (decidersOf(item).length === 0)
      throw new Error(
        `Nobody may decide this, so nobody was asked and the call did not run: ${whoMayDecide(item).refusal} Tell the person in your reply what you wanted to do and why.`,
      );
    return this.raise(item, signal);
  }

  /**
   * Whether the asking turn raised an item of `kind` for this call id, in any state (as `obtain`
   * finds them: only the asking turn's items count).
   */
  async raised(kind: PendingKind, context: AskContext, callId: string): Promise<boolean> {
    return (await this.store.forCall(kind, context.sessionId, callId, context.parked)) !== undefined;
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
    reply: TypedReply,
    keys: readonly string[],
  ): Promise<Settled<TextAnswer | undefined>> {
    return this.replies.answerText(parkedOf, sessionId, reply, keys);
  }

  /** Whether a typed message is an option of the open question it would answer (see PendingReplies). */
  offersOption(
    parkedOf: ParkedLookup,
    sessionId: string,
    reply: Omit<TypedReply, "files">,
  ): Promise<boolean> {
    return this.replies.offersOption(parkedOf, sessionId, reply);
  }

  /** Cancel every open item of a session (stop, new session); their cards say why. */
  cancelSession(sessionId: string, note: string): Promise<number> {
    return this.settler.cancelSession(sessionId, note);
  }

  /** Settle an item as expired (its timer ran out); returns it when this call expired it. */
  expire(id: string): Promise<Closed | undefined> {
    return this.settler.expire(id);
  }

  /**
   * Expire an item again after its expiry failed part-way (the store failed): expire it when it is
   * still open, or finish the settlement the failure left half done — its decision written, its
   * record or the open index not, so no turn was handed it and a later expiry or press found it
   * decided and did nothing more. Resolves with the session to resume when no turn here took the
   * outcome; rejects when the store fails again.
   */
  async expireAgain(id: string): Promise<string | undefined> {
    const item = await this.store.get(id);
    if (!item) return undefined;
    const completed = await this.settler.complete(item);
    if (completed.settled) return completed.resume ? item.sessionId : undefined;
    const expired = await this.settler.expire(id);
    return expired && !expired.claimed ? expired.item.sessionId : undefined;
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
      const item = await this.settler.read(entry.id);
      // Left as it is (expiring it would read it again and throw, failing the start): logged.
      if (item === "unreadable") continue;
      const completed = item && (await this.settler.complete(item));
      if (item && completed?.settled) {
        if (completed.resume) resumable.add(item.sessionId);
        continue;
      }
      if (Date.parse(entry.expiresAt) <= this.now().getTime()) {
        const expired = await this.settler.expire(entry.id);
        if (expired && !expired.claimed) resumable.add(expired.item.sessionId);
      } else {
        this.timers.arm(entry.id, entry.expiresAt);
        if (item) await this.cards.reshow(item);
      }
    }
    return resumable;
  }

  /**
   * Hand the session's items that were settled elsewhere (a press or typed answer taken by another
   * process sharing the store) to the turns waiting for them here.
   */
  async recheckSession(sessionId: string): Promise<void> {
    for (const id of this.waits.idsFor(sessionId)) {
      const item = await this.settler.load(id);
      if (item && item.status !== "pending") this.settler.release(id, item);
    }
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

  private async raise(item: PendingItem, signal: AbortSignal): Promise<PendingItem> {
    await this.store.create(item);
    // Wait first, so a turn counts as parked at a person as soon as its card can be seen.
    const settled = this.wait(item, signal);
    await this.inflight.track(this.show(item));
    return settled;
  }

  /** Post the card; an item whose card cannot be shown is cancelled as not shown (NOT_SHOWN). */
  private async show(item: PendingItem): Promise<void> {
    const failure = await this.cards.post(item);
    if (!failure) return;
    this.logger.error({ pendingId: item.id, sessionId: item.sessionId }, failure);
    await this.settler.close(item.id, { action: NOT_SHOWN, note: failure, at: this.settler.stamp() });
  }

  private async wait(item: PendingItem, signal: AbortSignal): Promise<PendingItem> {
    const settled = this.waits.add(item);
    this.timers.arm(item.id, item.expiresAt);
    const onAbort = () => {
      // A turn here of a session this process no longer holds is stale (its lease was lost while
      // it waited, and another process has taken the session since): it ends without settling
      // the item, whose card is the holder's to decide — only its wait here goes.
      if (this.options.holdsSession?.(item.sessionId) === false) {
        this.waits.release(item.id, item);
        return;
      }
      // Tracked, so shutdown (quiesce) waits for it before the store closes.
      const closing = this.settler.close(item.id, {
        action: "cancelled",
        note: "the turn was stopped",
        at: this.settler.stamp(),
      });
      void this.inflight.track(
        closing.then(async (closed) =>
          this.settler.release(item.id, closed?.item ?? (await this.settler.load(item.id)) ?? item),
        ),
      );
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    // A press may have settled the item between the caller's read and the waiter's registration.
    const latest = await this.settler.load(item.id);
    if (latest && latest.status !== "pending") this.settler.release(item.id, latest);
    try {
      return await settled;
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }
}
