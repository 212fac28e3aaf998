/**
 * ParkedTurns: the session layer's side of turns parked at a person. It hands the pending hub a
 * reply (a card press, a typed answer) together with the parked state of the item's session, and
 * when the hub says no turn in this process took the outcome, it resumes the parked turn — also
 * when an item's timer runs out, and after a restart. The hub never calls back into sessions.
 */
import type { Logger } from "pino";
import type { ParkedTurn } from "../approvals/parked-turn.js";
import type { PendingHub } from "../approvals/pending-hub.js";
import type { TextAnswer } from "../approvals/pending-hub-types.js";
import type { ButtonPress, PressResult } from "../core/button-press.js";
import { StoredDataError } from "../store/versioned.js";
import type { InboundMessage } from "../core/inbound-message.js";
import type { LiveSession } from "./live-session.js";
import { attachmentsOf } from "./request-builder.js";
import type { SessionCache } from "./session-cache.js";
import type { TurnScheduler } from "./turn-scheduler.js";

/** How long after a failed expiry it is tried again. */
const EXPIRY_RETRY_MS = 30_000;

export interface ParkedTurnsOptions {
  readonly hub: PendingHub;
  readonly cache: SessionCache;
  readonly scheduler: TurnScheduler;
  readonly logger: Logger;
  /**
   * With several processes: continue a settled session where it is held (its process is told),
   * or here when no one holds it (MultiProcessSessions.resume). Default: schedule it here.
   */
  readonly resumeShared?: (sessionId: string) => Promise<void>;
  /**
   * With several processes: whether this process's copy of the session is its current state (it
   * holds the session). When it is not, a reply is checked against the store instead: the copy
   * in memory may be from before another process parked the turn. Default: always.
   */
  readonly copyIsCurrent?: (sessionId: string) => boolean;
}

/** Replies to parked turns, and their resumption. */
export class ParkedTurns {
  /** Failed expiries waiting to be tried again (cleared at shutdown: `stopRetries`). */
  private readonly retries = new Set<NodeJS.Timeout>();
  private stopped = false;

  constructor(private readonly options: ParkedTurnsOptions) {}

  /** Resolve a card press on a pending item; a decision no turn here waits for resumes its turn. */
  async press(press: Extract<ButtonPress, { kind: "card" }>): Promise<PressResult> {
    const { result, resume } = await this.options.hub.press(press, (sessionId) => this.parkedOf(sessionId));
    if (resume) void this.resumeSession(resume.sessionId);
    return result;
  }

  /**
   * A typed message as the answer to the session's open question or plan, if it is one, with the
   * files it came with. A session that has not run a turn yet has none to answer (nothing is read)
   * — as this process's copy says only when it is current: with several processes a copy made
   * before another process ran the session's first turn still reads "no turn".
   */
  async answerText(
    live: LiveSession,
    message: InboundMessage,
    keys: readonly string[],
  ): Promise<TextAnswer | undefined> {
    const current = this.options.copyIsCurrent?.(live.id) !== false;
    if (current && live.record.turns === 0 && live.record.pendingTurn === undefined) return undefined;
    const reply = {
      platform: message.target.platform,
      user: message.user,
      text: message.text,
      files: attachmentsOf(message),
    };
    const parkedOf = () => this.parkedOf(live.id);
    const { result, resume } = await this.options.hub.answerText(parkedOf, live.id, reply, keys);
    if (resume) void this.resumeSession(resume.sessionId);
    return result;
  }

  /**
   * Whether a bare command word ("new") is the answer to the sender's open question in the
   * session: one of the options it offers. The slash form is always the command, and so is `stop`
   * (core/text-commands.ts' alwaysCommand: nothing is read for them).
   */
  answersWithOption(sessionId: string, message: InboundMessage): Promise<boolean> {
    const reply = { platform: message.target.platform, user: message.user, text: message.text };
    return this.options.hub.offersOption(() => this.parkedOf(sessionId), sessionId, reply);
  }

  /**
   * An item's expiry timer ran out: expire it, and resume its turn when none here waits for it.
   * An expiry that fails (the store did) is tried again after EXPIRY_RETRY_MS, until it goes
   * through: its timer has fired, and no other process will expire the item (the claim was this
   * one's), so the card would stay open and the turn parked until a restart.
   */
  expire(pendingId: string): Promise<void> {
    return this.tryExpiry(pendingId, false);
  }

  /** `expire`, or (`again`) its retry after a failure: the settlement finished if it was half done. */
  private async tryExpiry(pendingId: string, again: boolean): Promise<void> {
    let resume: string | undefined;
    try {
      if (again) resume = await this.options.hub.expireAgain(pendingId);
      else {
        const expired = await this.options.hub.expire(pendingId);
        if (expired && !expired.claimed) resume = expired.item.sessionId;
      }
    } catch (error) {
      // An item whose record cannot be read (a newer version's, or corrupt) stays so: not retried;
      // nor is anything after shutdown.
      const retry = !(error instanceof StoredDataError) && !this.stopped;
      this.options.logger.error(
        { err: error, pendingId },
        retry ? `expiry failed; trying again in ${EXPIRY_RETRY_MS / 1000} s` : "expiry failed",
      );
      if (retry) {
        const timer = setTimeout(() => {
          this.retries.delete(timer);
          void this.tryExpiry(pendingId, true);
        }, EXPIRY_RETRY_MS);
        timer.unref();
        this.retries.add(timer);
      }
      return;
    }
    if (resume !== undefined) await this.resumeSession(resume);
  }

  /**
   * Shutdown: failed expiries are tried no more (the next start's sweep expires what expired while
   * down), and none failing from now on is tried again — its store is closing.
   */
  stopRetries(): void {
    this.stopped = true;
    for (const timer of this.retries) clearTimeout(timer);
    this.retries.clear();
  }

  /**
   * After a restart: the hub settles what a crash interrupted and expires what expired while
   * down; then sessions with work in progress continue — except those still parked at a person,
   * which continue when the person answers.
   */
  async start(activeIds: readonly string[]): Promise<void> {
    const { hub } = this.options;
    const resumable = await hub.start();
    for (const id of resumable) void this.resumeSession(id);
    for (const id of activeIds) {
      if (resumable.has(id) || (await hub.hasOpenItems(id))) continue;
      await this.resumeSession(id);
    }
  }

  /** The parked turn of a session, as its record and history in the store say. */
  private async parkedOf(sessionId: string): Promise<ParkedTurn | undefined> {
    if (this.options.copyIsCurrent?.(sessionId) === false)
      return this.options.cache.storedParkedTurn(sessionId);
    return (await this.options.cache.byId(sessionId))?.parkedTurn();
  }

  /**
   * Continue a session's work in the background (a decision arrived, or after a restart). With
   * several processes, a turn still parked here for a session this process no longer holds (its
   * lease was lost while it waited) is left to resumeShared: it takes the decision when no other
   * process held the session since, and ends as stale when one did.
   */
  async resumeSession(sessionId: string): Promise<void> {
    try {
      if (this.options.resumeShared) return await this.options.resumeShared(sessionId);
      const live = await this.options.cache.byId(sessionId);
      if (live) this.options.scheduler.schedule(live);
      else this.options.logger.warn({ sessionId }, "cannot resume an unknown session");
    } catch (error) {
      this.options.logger.error({ err: error, sessionId }, "resuming a session failed");
    }
  }
}
