/**
 * TurnEvents: one turn's events as the session layer iterates them, and the hand-written iterator
 * the engine returns for a turn. It is written out rather than as an async generator: a generator
 * layer costs several promises per event, and every event of every turn passes through here. As
 * with a generator, the turn starts at the first `next()`, and stopping early (`return`, which
 * `for await` calls on a break or a throw) stops the turn and resolves once it has wound down.
 */
import type { AgentEvent } from "../core/events.js";

/** One turn's events; `return` before the end stops the turn. */
export interface TurnEvents extends AsyncIterableIterator<AgentEvent> {
  return(value?: unknown): Promise<IteratorResult<AgentEvent, undefined>>;
}

/** A turn once begun, as its TurnEvents drives it. */
export interface BegunTurn {
  /** Its events; they end only once the turn has wound down. */
  readonly events: AsyncIterator<AgentEvent, undefined>;
  /** Stop the turn (unless its events already ended); resolves once it has wound down. */
  stop(): Promise<void>;
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ value: undefined, done: true });

/** TurnEvents over the turn `begin` starts at the first `next()`; never begun when stopped first. */
export function turnEvents(begin: () => BegunTurn): TurnEvents {
  return new LazyTurnEvents(begin);
}

/** A class rather than an object literal of closures: one object per turn, its methods shared. */
class LazyTurnEvents implements TurnEvents {
  private turn: BegunTurn | undefined;
  private stopped = false;

  constructor(private readonly begin: () => BegunTurn) {}

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<AgentEvent, undefined>> {
    if (this.stopped) return Promise.resolve(DONE);
    this.turn ??= this.begin();
    return this.turn.events.next();
  }

  async return(): Promise<IteratorResult<AgentEvent, undefined>> {
    if (!this.stopped) {
      this.stopped = true;
      await this.turn?.stop();
    }
    return DONE;
  }
}
