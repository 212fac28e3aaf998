/**
 * SessionEngine: the engine a session gets from the engine factory when its instructions need
 * session-start knowledge that must be read asynchronously (AGENTS.md from disk) — which the
 * synchronous factory cannot wait for.
 *
 * It prepares the real engine once, on the session's first turn, and from then on hands every
 * call to it (a turn's events come straight from the real engine, with no layer in between); the
 * instructions' fixed part is therefore settled from the first turn on (what belongs to each
 * turn's requester is the real engine's, see requester-memories.ts). It implements the
 * session layer's SessionTurnEngine contract by composition: it holds the prepared engine and has
 * no engine state of its own. Steering and a stop that arrive while it prepares are kept and
 * applied to the real engine's turn, so the turn ends the way an interrupted turn always does
 * (user message stored, no orphaned calls).
 */
import type { Attachment } from "../core/attachment.js";
import { type AgentEvent, agentEvent } from "../core/events.js";
import type { ConversationMessage } from "../core/messages.js";
import type { ConversationExecutionRequest } from "../core/request.js";
import type { SessionTurnEngine } from "./session-turn-engine.js";
import type { TurnEvents } from "./turn-events.js";

/** The prepared engine and the notices (e.g. an unreadable AGENTS.md) to show before its first turn. */
export interface PreparedSession {
  readonly engine: SessionTurnEngine;
  readonly notices: readonly string[];
}

/** Builds the real engine when the session's first turn starts. */
export type SessionPreparer = () => Promise<PreparedSession>;

type Start = (engine: SessionTurnEngine) => TurnEvents;

const NO_MESSAGES: readonly ConversationMessage[] = Object.freeze([]);

/** An engine that prepares its real engine on the first turn (see the module header). */
export class SessionEngine implements SessionTurnEngine {
  private inner: SessionTurnEngine | undefined;
  /** A turn was accepted and the real engine's turn has not started yet. */
  private claimed = false;
  private stopRequested = false;
  private readonly earlySteering: { text: string; attachments: readonly Attachment[] }[] = [];

  /** Turns run on the engine `prepare` builds when the first one starts. */
  constructor(private readonly prepare: SessionPreparer) {}

  run(request: ConversationExecutionRequest): TurnEvents {
    return this.turn((engine) => engine.run(request));
  }

  resume(request: ConversationExecutionRequest): TurnEvents {
    return this.turn((engine) => engine.resume(request));
  }

  retry(request: ConversationExecutionRequest): TurnEvents {
    return this.turn((engine) => engine.retry(request));
  }

  interrupt(): void {
    if (this.claimed) this.stopRequested = true;
    this.inner?.interrupt();
  }

  steer(text: string, attachments: readonly Attachment[] = []): void {
    if (this.inner) this.inner.steer(text, attachments);
    else this.earlySteering.push({ text, attachments });
  }

  get messages(): readonly ConversationMessage[] {
    return this.inner?.messages ?? NO_MESSAGES;
  }

  get isRunning(): boolean {
    return this.claimed || (this.inner?.isRunning ?? false);
  }

  /** Whether the real engine has been prepared (after the first turn began). */
  get prepared(): boolean {
    return this.inner !== undefined;
  }

  private async ready(): Promise<PreparedSession> {
    if (this.inner) return { engine: this.inner, notices: [] };
    const prepared = await this.prepare();
    this.inner = prepared.engine;
    for (const { text, attachments } of this.earlySteering.splice(0))
      prepared.engine.steer(text, attachments);
    return prepared;
  }

  /** Once the real engine is ready (and no first turn is being claimed), the turn is its own. */
  private turn(start: Start): TurnEvents {
    return this.inner && !this.claimed ? start(this.inner) : this.delegate(start);
  }

  /** The first turn: prepare the real engine, show its notices, then hand over to its turn. */
  private async *delegate(start: Start): AsyncGenerator<AgentEvent> {
    if (this.isRunning) {
      yield agentEvent({
        type: "error",
        message: "A turn is already running in this conversation.",
        recoverable: true,
      });
      return;
    }
    this.claimed = true;
    this.stopRequested = false;
    let events: TurnEvents | undefined;
    let finished = false;
    try {
      const { engine, notices } = await this.ready();
      for (const message of notices) yield agentEvent({ type: "notice", level: "warning", message });
      events = start(engine);
      const first = events.next(); // the real turn starts now, so its own interrupt works from here
      this.claimed = false;
      if (this.stopRequested) engine.interrupt();
      for (let step = await first; !step.done; step = await events.next()) yield step.value;
      finished = true;
    } finally {
      this.claimed = false;
      if (events && !finished) await events.return(undefined);
    }
  }
}
