/**
 * TurnGate: the contract by which several processes sharing one store decide who runs a
 * session's turns. The scheduler asks it instead of the in-process lock; lease-gate.ts
 * implements it on leases and shared queues (multi-process.ts puts it together).
 */
import type { LiveSession } from "./live-session.js";
import type { SessionLease } from "./session-lock.js";
import type { QueuedMessage } from "./session-record.js";

/**
 * How pumps take sessions when several processes share one store (instead of `lock`): a pump
 * runs only while this process holds the session's lease, takes in the input other processes
 * queued for it before each turn, and new input goes to the shared queue.
 */
export interface TurnGate {
  /**
   * Take the session (its lease; its copy brought up to date, its queued input taken in);
   * undefined when another process has it.
   */
  enter(live: LiveSession): Promise<SessionLease | undefined>;
  /** Take in input queued for the session since, by any process (the pump holds the session). */
  collect(live: LiveSession): Promise<void>;
  /** Queue a message for the session, whichever process runs it (see GateOffer). */
  offer(live: LiveSession, message: QueuedMessage, input: GateInput): Promise<GateOffer>;
}

/**
 * How the holder takes a message offered through the gate: whether it may steer a running turn
 * (a person's message, in steer mode), and whether the queue cap may refuse it (a person's
 * message; a wake-up or a command's turn is always queued, as with one process).
 */
export interface GateInput {
  readonly steer: boolean;
  readonly capped: boolean;
}

/**
 * What offering a message did: it was a redelivery ("duplicate"), it waits for the process that
 * holds the session ("queued"), or the session was free and this process now holds it (its lease,
 * the queued input already taken in) and runs the pump.
 */
export type GateOffer = "duplicate" | "queued" | SessionLease;
