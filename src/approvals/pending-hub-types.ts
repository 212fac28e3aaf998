/**
 * The PendingHub's boundary types: what it needs from the session layer (PendingHost), how it is
 * built, who asks, and what a typed answer did.
 */
import type { Logger } from "pino";
import type { ThreadOutput } from "../core/thread-output.js";
import type { ThreadTarget } from "../core/thread-target.js";
import type { ApprovalsConfig } from "./authorisation.js";
import type { ClaimOnce } from "./expiry-timers.js";
import type { PendingItem, PendingPerson } from "./pending-item.js";
import type { PendingStore } from "./pending-store.js";

/** The tool call a session's persisted history is waiting on. */
export interface WaitingCall {
  readonly tool: string;
  readonly args: unknown;
}

/** What the hub needs from the session layer. */
export interface PendingHost {
  outputFor(target: ThreadTarget): ThreadOutput | undefined;
  /** The call if `callId` is still unanswered in the session's history. */
  waitingCall(sessionId: string, callId: string): Promise<WaitingCall | undefined>;
  /** An item settled and no turn in this process waits for it: continue the session's turn. */
  resume(sessionId: string): void;
  /** Mark inbound dedupe keys as seen (those of a typed answer, before its item leaves the open index). */
  recordDelivery(keys: readonly string[]): Promise<void>;
}

/** What a typed message did to the open items: answered one, or was a redelivery of an answer. */
export type TextAnswer = "answered" | "redelivered";

/** Who is asking, for the turn that raises an item. */
export interface AskContext {
  readonly sessionId: string;
  readonly target: ThreadTarget;
  readonly requester: PendingPerson;
  /** Who started the session; decides who may loosen it in a shared thread without approvers. */
  readonly startedBy?: PendingPerson | undefined;
}

export interface PendingHubOptions {
  readonly store: PendingStore;
  readonly host: PendingHost;
  readonly config: Pick<ApprovalsConfig, "approvers" | "perChannel" | "ttlMs">;
  readonly logger: Logger;
  readonly now: () => Date;
  /** Several processes on one store: an item's expiry is claimed there, so one process expires it. */
  readonly claim?: ClaimOnce;
}

/** A turn in this process waiting for an item's outcome. */
export interface Waiter {
  readonly callId: string;
  readonly argsHash: string;
  readonly sessionId: string;
  readonly resolve: (item: PendingItem) => void;
}
