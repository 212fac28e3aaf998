/**
 * An in-test ConversationService: records what the console sends and runs a scripted turn per
 * received message through the registered ThreadOutput, pausing for card presses or text answers
 * exactly as the session layer would.
 */
import type { Card, CardRef } from "../../../src/core/card.js";
import { type AgentEvent, agentEvent } from "../../../src/core/events.js";
import type { ButtonPress, PressResult } from "../../../src/core/button-press.js";
import type { InboundMessage } from "../../../src/core/inbound-message.js";
import type { ReceiveResult } from "../../../src/sessions/contracts.js";
import type { TurnRenderer } from "../../../src/core/thread-output.js";
import { type RecordedCommand, RecordingService } from "../../support/recording-service.js";

/** What a scripted turn can do. */
export interface TurnKit {
  readonly message: InboundMessage;
  emit(event: AgentEvent): Promise<void>;
  /** Post a card and wait for a press (or a text answer for questions); returns the action or text. */
  ask(card: Card): Promise<string>;
}

export type TurnScript = (kit: TurnKit) => Promise<void>;

export class FakeService extends RecordingService {
  readonly turnsDone: string[] = [];
  private waiting: { pendingId: string; resolve: (answer: string) => void } | undefined;
  /** Who pressed the last card button, named on the card's outcome. */
  private presser: { readonly platform: string; readonly id: string; readonly name: string } | undefined;
  private turnCount = 0;

  constructor(private readonly scripts: Readonly<Record<string, TurnScript>>) {
    super();
  }

  protected handle(message: InboundMessage): ReceiveResult {
    if (this.waiting !== undefined) {
      const { resolve } = this.waiting;
      this.waiting = undefined;
      resolve(message.text);
      return { status: "answered" };
    }
    const script = this.scripts[message.text];
    if (script === undefined) return { status: "ignored", reason: `no script for "${message.text}"` };
    this.turnCount++;
    const turnId = `t${this.turnCount}`;
    setImmediate(() => void this.runTurn(turnId, message, script));
    return { status: "started" };
  }

  private async runTurn(turnId: string, message: InboundMessage, script: TurnScript): Promise<void> {
    const output = this.output(message.target);
    const renderer: TurnRenderer = output.beginTurn({ sessionId: "s1", turnId });
    await script({
      message,
      emit: async (event) => renderer.handle(agentEvent(event)),
      ask: async (card) => {
        // Like the session layer: the pending item exists before the card is shown.
        const answered = new Promise<string>((resolve) => {
          this.waiting = { pendingId: card.pendingId, resolve };
        });
        const ref: CardRef = await output.postCard(card);
        const answer = await answered;
        const by = this.presser;
        this.presser = undefined;
        const outcome = by
          ? { text: "Answered by ", by, after: `: ${answer}` }
          : { text: `Answered: ${answer}` };
        await output.updateCard(ref, { ...card, buttons: [], outcome });
        return answer;
      },
    });
    this.turnsDone.push(turnId);
    await renderer.close();
  }

  protected decide(press: ButtonPress): PressResult {
    if (press.kind === "control") return { status: "accepted", message: "Stopping." };
    const waiting = this.waiting;
    if (waiting === undefined || waiting.pendingId !== press.pendingId) {
      return { status: "already_decided", message: "That was already decided." };
    }
    this.waiting = undefined;
    this.presser = { platform: press.platform, id: press.user.id, name: press.user.name };
    waiting.resolve(press.action);
    return { status: "accepted", message: `Recorded ${press.action}.` };
  }

  protected reply({ user, name }: RecordedCommand): string {
    return `${name} for ${user.name}: ok`;
  }
}
