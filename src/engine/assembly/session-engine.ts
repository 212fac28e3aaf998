/**
 * SessionEngine: the TurnEngine a session gets from the engine factory when its instructions need
 * session-start knowledge that must be read asynchronously (AGENTS.md from disk, memories from
 * the store) and that depends on who asks first — which the synchronous factory does not know.
 *
 * It prepares the real engine once, on the session's first turn, and from then on hands every
 * call to it; the instructions are therefore fixed from the first turn on. The session layer's
 * factory contract returns a TurnEngine instance, so this class extends it; the inherited engine
 * state is never driven: every public member is delegated. Steering and a stop that arrive
 * while it prepares are kept and applied to the real engine's turn, so the turn ends the way an
 * interrupted turn always does (user message stored, no orphaned calls).
 */
import type { Attachment } from "../../core/attachment.js";
import { type AgentEvent, agentEvent } from "../../core/events.js";
import type { ConversationMessage } from "../../core/messages.js";
import type { ConversationExecutionRequest } from "../../core/request.js";
import { TurnEngine, type TurnEngineOptions } from "../turn-engine.js";

/** The prepared engine and the notices (e.g. an unreadable AGENTS.md) to show before its first turn. */
export interface PreparedSession {
  readonly engine: TurnEngine;
  readonly notices: readonly string[];
}

/** Builds the real engine from the session's first request (its requester, channel and mode). */
export type SessionPreparer = (firstRequest: ConversationExecutionRequest) => Promise<PreparedSession>;

type Start = (engine: TurnEngine) => AsyncGenerator<AgentEvent>;

const NO_MESSAGES: readonly ConversationMessage[] = Object.freeze([]);

/** A TurnEngine that prepares its real engine on the first turn (see the module header). */
export class SessionEngine extends TurnEngine {
  private inner: TurnEngine | undefined;
  /** A turn was accepted and the real engine's turn has not started yet. */
  private claimed = false;
  private stopRequested = false;
  private readonly earlySteering: { text: string; attachments: readonly Attachment[] }[] = [];

  /** `base` satisfies the TurnEngine constructor only; turns run on the engine `prepare` builds. */
  constructor(
    base: TurnEngineOptions,
    private readonly prepare: SessionPreparer,
  ) {
    super(base);
  }

  override run(request: ConversationExecutionRequest): AsyncGenerator<AgentEvent> {
    return this.delegate(request, (engine) => engine.run(request));
  }

  override resume(request: ConversationExecutionRequest): AsyncGenerator<AgentEvent> {
    return this.delegate(request, (engine) => engine.resume(request));
  }

  override retry(request: ConversationExecutionRequest): AsyncGenerator<AgentEvent> {
    return this.delegate(request, (engine) => engine.retry(request));
  }

  override interrupt(): void {
    if (this.claimed) this.stopRequested = true;
    this.inner?.interrupt();
  }

  override steer(text: string, attachments: readonly Attachment[] = []): void {
    if (this.inner) this.inner.steer(text, attachments);
    else this.earlySteering.push({ text, attachments });
  }

  override get messages(): readonly ConversationMessage[] {
    return this.inner?.messages ?? NO_MESSAGES;
  }

  override get isRunning(): boolean {
    return this.claimed || (this.inner?.isRunning ?? false);
  }

  /** Whether the real engine has been prepared (after the first turn began). */
  get prepared(): boolean {
    return this.inner !== undefined;
  }

  private async ready(request: ConversationExecutionRequest): Promise<PreparedSession> {
    if (this.inner) return { engine: this.inner, notices: [] };
    const prepared = await this.prepare(request);
    this.inner = prepared.engine;
    for (const { text, attachments } of this.earlySteering.splice(0))
      prepared.engine.steer(text, attachments);
    return prepared;
  }

  private async *delegate(request: ConversationExecutionRequest, start: Start): AsyncGenerator<AgentEvent> {
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
    let events: AsyncGenerator<AgentEvent> | undefined;
    let finished = false;
    try {
      const { engine, notices } = await this.ready(request);
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
