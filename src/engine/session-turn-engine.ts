/**
 * SessionTurnEngine: the part of an engine the session layer drives — start, resume or retry a
 * turn, stop or steer the running one, and tell whether a turn runs. TurnEngine
 * implements it; the session layer's engine factory returns this contract, not a class, so the
 * session layer needs nothing else of the engine (and its tests can drive a stand-in).
 */
import type { Attachment } from "../core/attachment.js";
import type { ConversationExecutionRequest } from "../core/request.js";
import type { TurnEvents } from "./turn-events.js";

/** One conversation's engine as the session layer drives it (see the module header). */
export interface SessionTurnEngine {
  /** A user turn: `request.prompt` joins the history first. */
  run(request: ConversationExecutionRequest): TurnEvents;
  /** Continue a turn persisted while it waited at a person. */
  resume(request: ConversationExecutionRequest): TurnEvents;
  /** Re-run after a provider error without a new user message. */
  retry(request: ConversationExecutionRequest): TurnEvents;
  /** Stop the running turn. */
  interrupt(): void;
  /** Queue user text for the running (or next) turn. */
  steer(text: string, attachments?: readonly Attachment[]): void;
  /** Whether a turn is in progress. */
  readonly isRunning: boolean;
}
