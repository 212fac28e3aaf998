/**
 * TurnEvents: like a generator, the turn begins at the first `next()`; `return` stops a begun turn
 * (and waits for it), never begins one, and leaves a turn whose events already ended alone.
 */
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/core/events.js";
import { EventChannel } from "../../src/engine/event-channel.js";
import { type BegunTurn, turnEvents } from "../../src/engine/turn-events.js";

const notice = (message: string): AgentEvent => ({ type: "notice", level: "info", message });

/** A turn whose events the test pushes, recording when it began and stopped. */
function scriptedTurn() {
  const log: string[] = [];
  const channel = new EventChannel<AgentEvent>();
  const begin = (): BegunTurn => {
    log.push("begun");
    return {
      events: channel[Symbol.asyncIterator](),
      stop: async () => {
        log.push("stopped");
      },
    };
  };
  return { log, channel, begin };
}

describe("turnEvents", () => {
  it("begins the turn at the first next(), not when created", async () => {
    const turn = scriptedTurn();
    const events = turnEvents(turn.begin);
    expect(turn.log).toEqual([]);
    turn.channel.push(notice("one"));
    turn.channel.close();
    const seen: AgentEvent[] = [];
    for await (const event of events) seen.push(event);
    expect(seen).toEqual([notice("one")]);
    expect(turn.log).toEqual(["begun"]);
  });

  it("return() stops a begun turn, and the events are over after it", async () => {
    const turn = scriptedTurn();
    const events = turnEvents(turn.begin);
    turn.channel.push(notice("one"));
    for await (const event of events) if (event.type === "notice") break;
    expect(turn.log).toEqual(["begun", "stopped"]);
    expect(await events.next()).toEqual({ value: undefined, done: true });
    await events.return();
    expect(turn.log).toEqual(["begun", "stopped"]);
  });

  it("return() before the first next() never begins the turn", async () => {
    const turn = scriptedTurn();
    const events = turnEvents(turn.begin);
    expect(await events.return()).toEqual({ value: undefined, done: true });
    expect(await events.next()).toEqual({ value: undefined, done: true });
    expect(turn.log).toEqual([]);
  });
});
