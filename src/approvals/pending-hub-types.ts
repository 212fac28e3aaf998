/**
 * The PendingHub's boundary types: how it is built (its ports: thread outputs for cards, the
 * inbound dedupe marks, the expiry schedule), who asks, and what settling something did — the
 * result for the person and, when no turn in this process took the outcome, the parked turn the
 * session layer must resume. The hub never calls back into the session layer.
 */
import type { Logger } from "pino";
import type { ThreadOutput } from "../core/thread-output.js";
import type { ThreadTarget } from "../core/thread-target.js";
import type { ApprovalsConfig } from "./authorisation.js";
import type { ParkedTurn } from "./parked-turn.js";
import type { PendingItem, PendingPerson } from "./pending-item.js";
import type { PendingStore } from "./pending-store.js";

/** What a typed message did to the open items: answered one, or was a redelivery of an answer. */
export type TextAnswer = "answered" | "redelivered";

/** Who is asking, for the turn that raises an item. */
export interface AskContext {
  readonly sessionId: string;
  readonly target: ThreadTarget;
  readonly requester: PendingPerson;
  /**
   * No person's message started the asking turn (a wake-up, a scheduled run): nothing in the
   * thread points to its requester, so a question card names them.
   */
  readonly woken?: boolean | undefined;
  /** Who started the session; decides who may loosen it in a shared thread without approvers. */
  readonly startedBy?: PendingPerson | undefined;
  /**
   * The asking turn as it stands in the store: its waiting calls identify the call asked about, and
   * its id keys the items it raises (turn-call-key.ts).
   */
  readonly parked?: ParkedTurn | undefined;
}

/** Where inbound dedupe keys are marked as seen (those of a typed answer, stored with it). */
export interface DeliveryMarks {
  record(keys: readonly string[]): Promise<void>;
}

/** One timer per open item; the session layer fires `PendingHub.expire` when one runs out. */
export interface ExpirySchedule {
  arm(id: string, expiresAt: string): void;
  clear(id: string): void;
  clearAll(): void;
}

export interface PendingHubOptions {
  readonly store: PendingStore;
  /** The thread output a card goes to (undefined when the platform has none registered). */
  readonly outputFor: (target: ThreadTarget) => ThreadOutput | undefined;
  readonly deliveries: DeliveryMarks;
  readonly timers: ExpirySchedule;
  readonly config: Pick<ApprovalsConfig, "approvers" | "perChannel" | "ttlMs" | "unchecked">;
  readonly logger: Logger;
  readonly now: () => Date;
  /**
   * With several processes: whether this process holds the session. A turn parked here for a
   * session another process took over is stale: a decision is not handed to it but to the holder
   * (the result says to resume). Default: always (one process).
   */
  readonly holdsSession?: (sessionId: string) => boolean;
}

/**
 * Reads the parked turn of a session from the store (record marker + history), for checking a
 * reply against the calls it waits for. Data in, data out: the hub asks only when no turn in
 * this process waits for the item.
 */
export type ParkedLookup = (sessionId: string) => Promise<ParkedTurn | undefined>;

/**
 * What a person's reply did: the result to show them, and the parked turn to resume when the
 * reply settled an item no turn in this process waits for.
 */
export interface Settled<R> {
  readonly result: R;
  readonly resume?: ParkedTurn | undefined;
}

/** An item this call settled, and whether a turn in this process took the outcome. */
export interface Closed {
  readonly item: PendingItem;
  readonly claimed: boolean;
}
