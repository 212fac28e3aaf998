/**
 * A turn parked under a lease that was lost, whose session this process has taken again since
 * (LeaseGate.retake, or an offer), ends and lets its old lease go while the newer lease is held.
 * Letting the old lease go saved the record and then forgot the count of entries taken in from
 * the shared queue — the newer lease's count: an entry the newer lease took in while that save
 * was under way was then removed from the shared queue by no save, and the next take read it
 * again (the message ran twice). The old lease now only goes; the newer one's count is left alone.
 */
import pino from "pino";
import { expect, it } from "vitest";
import { LeaseGate, type LeaseGateOptions } from "../../src/sessions/lease-gate.js";
import type { HeldSession } from "../../src/sessions/lease-lock.js";
import type { LiveSession } from "../../src/sessions/live-session.js";
import type { QueuedMessage } from "../../src/sessions/session-record.js";

const entry = (text: string) => {
  const message: QueuedMessage = {
    user: { id: "U1", name: "U" },
    text,
    files: [],
    sentAt: "2026-01-01T00:00:00Z",
  };
  return JSON.stringify({ message, steer: false, capped: false });
};

it("letting a lost lease go leaves every entry the newer lease here took in to be removed by a save", async () => {
  const released: string[] = [];
  const held = (name: string) =>
    ({ sessionId: "s1", release: async () => void released.push(name) }) as unknown as HeldSession;
  const oldLease = held("old");
  const newLease = held("new");
  const gate = new LeaseGate({
    leases: { holding: () => newLease, fenceOf: () => ({ key: "session:s1", fence: 2 }) },
    host: () => ({ queueCap: { admits: () => true } }),
    logger: pino({ level: "silent" }),
  } as unknown as LeaseGateOptions);
  // Entries removed from the shared queue by the record's saves (each removes what it carries).
  const removed: number[] = [];
  const gateOpen: Array<() => void> = [];
  const blocked = new Promise<void>((resolve) => gateOpen.push(resolve));
  const unblock = () => {
    for (const open of gateOpen) open();
  };
  const save = (wait: Promise<void>) =>
    gate.queue.saveTaken("s1", gate.queue.takenSoFar("s1"), async (count) => {
      await wait;
      removed.push(count);
    });
  const live = {
    id: "s1",
    takeShared: () => undefined,
    update: () => save(blocked),
  } as unknown as LiveSession;

  // Under the newer lease, one entry is taken in (not saved yet); the old lease goes meanwhile,
  // and while any save it makes is under way the newer lease takes a second entry in.
  await gate.queue.takeItems(live, [entry("one")]);
  const releasing = gate.release(live, oldLease);
  await gate.queue.takeItems(live, [entry("one"), entry("two")]);
  unblock();
  await releasing;
  await save(Promise.resolve());

  expect(released).toEqual(["old"]);
  expect(removed.reduce((a, b) => a + b, 0)).toBe(2);
  expect(gate.queue.untrimmed("s1")).toBe(0);
});
