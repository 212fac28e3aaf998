/**
 * RecordingOutput: a fake channel for session tests. One recorder per thread records every turn's
 * events, posted and updated cards and plain texts; `RecordingOutputs` is the factory a test
 * registers for a platform. Tests await conditions (`until`) that are re-checked on every change,
 * never on a timer.
 */
import type { Card, CardRef } from "../../src/core/card.js";
import type { AgentEvent } from "../../src/core/events.js";
import type {
  ThreadOutput,
  ThreadOutputFactory,
  TurnInfo,
  TurnRenderer,
} from "../../src/core/thread-output.js";
import { type ThreadTarget, sessionKeyOf } from "../../src/core/thread-target.js";

export interface RecordedTurn {
  readonly sessionId: string;
  readonly turnId: string;
  readonly replyTo?: TurnInfo["replyTo"];
  readonly events: AgentEvent[];
  closed: boolean;
}

export interface RecordedCard {
  readonly ref: CardRef;
  /** Every version of the card, first the posted one. */
  readonly versions: Card[];
}

type Listener = () => void;

/** Records everything the session layer sends to one thread. */
export class RecordingOutput implements ThreadOutput {
  readonly turns: RecordedTurn[] = [];
  readonly cards: RecordedCard[] = [];
  readonly texts: string[] = [];

  constructor(
    readonly target: ThreadTarget,
    private readonly changed: () => void,
    private readonly nextRef: () => string,
    private readonly onPostCard: (card: Card) => Promise<void>,
  ) {}

  beginTurn(info: TurnInfo): TurnRenderer {
    const turn: RecordedTurn = { ...info, events: [], closed: false };
    this.turns.push(turn);
    this.changed();
    return {
      handle: async (event) => {
        turn.events.push(event);
        this.changed();
      },
      close: async () => {
        turn.closed = true;
        this.changed();
      },
    };
  }

  async postCard(card: Card): Promise<CardRef> {
    await this.onPostCard(card);
    const ref = { messageId: this.nextRef() };
    this.cards.push({ ref, versions: [card] });
    this.changed();
    return ref;
  }

  async updateCard(ref: CardRef, card: Card): Promise<void> {
    const found = this.cards.find((c) => c.ref.messageId === ref.messageId);
    // A card posted by an earlier process is updated by its stored ref, like a real channel does.
    if (found) found.versions.push(card);
    else this.cards.push({ ref, versions: [card] });
    this.changed();
  }

  async postText(text: string): Promise<void> {
    this.texts.push(text);
    this.changed();
  }

  /** The latest version of every card. */
  get latestCards(): Card[] {
    return this.cards.map((c) => c.versions.at(-1)!);
  }

  /** The latest version of the card for a pending id. */
  card(pendingId: string): Card | undefined {
    return this.latestCards.find((c) => c.pendingId === pendingId);
  }

  /** Closed turns, in order. */
  get closedTurns(): RecordedTurn[] {
    return this.turns.filter((t) => t.closed);
  }

  /** Concatenated text deltas of a turn. */
  static textOf(turn: RecordedTurn): string {
    return turn.events.map((e) => (e.type === "text-delta" ? e.delta : "")).join("");
  }
}

/** One recorder per thread, and waiting on conditions across all of them. */
export class RecordingOutputs {
  private readonly byThread = new Map<string, RecordingOutput>();
  private readonly listeners = new Set<Listener>();
  private refs = 0;
  /** Runs inside every postCard before it returns (to observe what was persisted by then). */
  onPostCard: (card: Card) => Promise<void> = async () => undefined;

  /** Every target the session layer asked an output for, in order (replies carry their replyTo). */
  readonly asked: ThreadTarget[] = [];

  /** The factory to register with the session layer. */
  readonly factory: ThreadOutputFactory = (target) => {
    this.asked.push(target);
    return this.for(target);
  };

  /** The recorder of a thread (created on first use). */
  for(target: ThreadTarget): RecordingOutput {
    const key = sessionKeyOf(target);
    let output = this.byThread.get(key);
    if (!output) {
      output = new RecordingOutput(
        target,
        () => this.notify(),
        () => `m${++this.refs}`,
        (card) => this.onPostCard(card),
      );
      this.byThread.set(key, output);
    }
    return output;
  }

  /** The conversation card `pendingId` was posted in, when one of these recorders holds it. */
  placeOf(pendingId: string): ThreadTarget | undefined {
    for (const output of this.byThread.values()) if (output.card(pendingId)) return output.target;
    return undefined;
  }

  /** Resolve once `condition` holds (checked now and after every recorded change). */
  until<T>(condition: () => T | undefined | false, what: string, timeoutMs = 10_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const value = condition();
        if (value === undefined || value === false) return false;
        this.listeners.delete(check);
        clearTimeout(timer);
        resolve(value);
        return true;
      };
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        reject(new Error(`timed out waiting for: ${what}`));
      }, timeoutMs);
      if (!check()) this.listeners.add(check);
    });
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}
