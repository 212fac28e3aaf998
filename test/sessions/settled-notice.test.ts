/**
 * The "settled" notice TurnControlDispatch.resume sends the holder of a session whose pending item
 * was settled elsewhere: the holder's parked turn waits for it. A holder alive but briefly not
 * listening (its Redis subscription lost) renews its lease all the while, so failover never steps
 * in: a notice it did not take is sent again, and one whose holder died goes to whoever holds the
 * session next — or, when none does, the session is resumed here.
 */
import { expect, it } from "vitest";
import type { LeaseGate } from "../../src/sessions/lease-gate.js";
import type { SessionLeases } from "../../src/sessions/lease-lock.js";
import type { LiveSession } from "../../src/sessions/live-session.js";
import type { MultiProcessHost } from "../../src/sessions/multi-process-host.js";
import { TurnControlDispatch } from "../../src/sessions/turn-control-dispatch.js";
import type { TurnControl, TurnControls } from "../../src/sessions/turn-controls.js";

/**
 * A dispatch whose session is held by the processes `holders` names, one lookup after another
 * (the last one stays), and whose controls reach a process only when `takes` says so (in turn;
 * then true).
 */
function dispatchWith(holders: Array<string | undefined>, takes: boolean[]) {
  const sent: Array<{ holder: string; control: TurnControl }> = [];
  const scheduled: string[] = [];
  const loaded: string[] = [];
  const live = { id: "s1" } as LiveSession;
  const leases = {
    holding: () => undefined,
    holderElsewhere: async () => (holders.length > 1 ? holders.shift() : holders[0]),
  } as unknown as SessionLeases;
  const controls = {
    send: async (holder: string, control: TurnControl) => {
      sent.push({ holder, control });
      return takes.shift() ?? true;
    },
  } as unknown as TurnControls;
  const host = {
    liveById: async (id: string) => {
      loaded.push(id);
      return id === live.id ? live : undefined;
    },
    isParked: () => false,
    schedule: (l: LiveSession) => scheduled.push(l.id),
  } as unknown as MultiProcessHost;
  const dispatch = new TurnControlDispatch({
    leases,
    controls,
    // No turn is left parked here by a lease lost: nothing to end or take back.
    gate: { endStale: async () => undefined, retake: async () => undefined } as unknown as LeaseGate,
    host: () => host,
    timing: { ttlMs: 1_000, renewMs: 100 },
  });
  return { dispatch, sent, scheduled, loaded };
}

it("a settled notice the holder did not take is sent again until it does", async () => {
  const { dispatch, sent, scheduled } = dispatchWith(["B"], [false, false, true]);
  await dispatch.resume("s1");
  expect(sent.map((s) => s.holder)).toEqual(["B", "B", "B"]);
  expect(sent.every((s) => s.control.kind === "settled" && s.control.sessionId === "s1")).toBe(true);
  expect(scheduled).toEqual([]);
});

it("a settled notice whose holder died goes to the next holder, or resumes the session here", async () => {
  const next = dispatchWith(["B", "C"], [false, true]);
  await next.dispatch.resume("s1");
  expect(next.sent.map((s) => s.holder)).toEqual(["B", "C"]);
  expect(next.scheduled).toEqual([]);

  const none = dispatchWith(["B", undefined], [false]);
  await none.dispatch.resume("s1");
  expect(none.sent.map((s) => s.holder)).toEqual(["B"]);
  expect(none.scheduled).toEqual(["s1"]);
});

it("a settled notice the holder took loads nothing here when no turn is parked here", async () => {
  const { dispatch, loaded } = dispatchWith(["B"], [true]);
  await dispatch.resume("s1");
  // A session not parked here has no stale turn to end: reading it from the store is wasted.
  expect(loaded).toEqual([]);
});
