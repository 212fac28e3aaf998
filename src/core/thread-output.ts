/**
 * The output port a channel implements for one thread: stream a turn's events, post and update
 * cards, post short texts. Sessions, approvals and subscriptions write through it without
 * knowing the platform.
 */
import type { Card, CardRef } from "./card.js";
import type { AgentEvent } from "./events.js";
import type { ThreadTarget } from "./thread-target.js";

/** Renders one running turn's events into the thread. */
export interface TurnRenderer {
  /**
   * Take in one event: a promise when there is something to wait for, else undefined (a renderer
   * that only folds the event into its view; awaiting a settled promise costs a promise and a tick).
   */
  handle(event: AgentEvent): Promise<void> | undefined;
  /** The turn is over (after `turn-completed`, or abandoned): flush everything. */
  close(): Promise<void>;
}

/** What a channel is told when a turn begins. */
export interface TurnInfo {
  readonly sessionId: string;
  readonly turnId: string;
  /**
   * The `target.extra` of the message that triggered this turn (e.g. the message id to reply to);
   * the session's target keeps the extra of its first message. Absent for turns no message
   * triggered (wake-ups, schedules), retries, and turns whose trigger is unknown (queued or started
   * by an older version): such a turn's output is opened on the thread itself (the session's target
   * without its first message's reply, core/thread-target.ts' replyingToNone).
   */
  readonly replyTo?: Readonly<Record<string, string | number | boolean>>;
}

/** A channel's handle on one thread: streams turns and posts / updates cards there. */
export interface ThreadOutput {
  beginTurn(info: TurnInfo): TurnRenderer;
  postCard(card: Card): Promise<CardRef>;
  updateCard(ref: CardRef, card: Card): Promise<void>;
  /** A short standalone message (command replies, refusals, subscription notices). */
  postText(text: string): Promise<void>;
  /**
   * Optional, for channels whose cards do not outlive the process (the console): show a card
   * that is still pending from before a restart again; resolves with its new ref.
   */
  reshowCard?(card: Card): Promise<CardRef>;
}

/** Each channel registers one: the session layer can reach any thread, also after a restart. */
export type ThreadOutputFactory = (target: ThreadTarget) => ThreadOutput;
