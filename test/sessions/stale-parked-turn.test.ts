/**
 * A turn parked at a card in a process that lost the session's lease while it waited: A parks a
 * turn at an approval card, its renewals hang past the TTL and B's failover takes the session over
 * and waits on the same card. A's in-memory turn is stale; once A learns another process took the
 * session (the next message through A), it ends quietly — the card left to B, nothing written —
 * so it neither holds up the lease A takes next, for good, nor cancels the card B waits on.
 */
import { expect, it } from "vitest";
import { cardPress } from "../support/card-press.js";
import { eventually } from "../support/eventually.js";
import type { RecordingOutput } from "../support/recording-output.js";
import { ANA, message } from "./helpers/harness.js";
import { answered, staleAtA, waitingAt, writingPairPerFile } from "./helpers/writing-stacks.js";

const file = writingPairPerFile();
const { outputs, runsA, runsB } = file;

/** Nothing failed or stopped was shown in the thread (A's stale turn ended quietly). */
function nothingStaleShown(out: RecordingOutput): void {
  const events = out.closedTurns.flatMap((t) => t.events);
  expect(events.filter((e) => e.type === "error")).toHaveLength(0);
  expect(events.filter((e) => e.type === "tool-call-finished" && e.status !== "ok")).toHaveLength(0);
}

it("a message through A after B finished the turn A was parked in runs: A's stale turn does not hold its lease", async () => {
  const { target, a, b, out, card, sessionId } = await staleAtA(file, "1700009300.000001", "s1");
  const pressed = await b.manager.press(cardPress(target, card.pendingId, "once", ANA));
  expect(pressed.status).toBe("accepted");
  await outputs.until(() => answered(out, "wrote"), "B's turn to finish after its call", 10_000);
  await b.manager.idle();

  await a.manager.receive(message("hello again", { target }));
  await outputs.until(() => answered(out, "re: hello again"), "the next message answered", 10_000);
  expect(waitingAt(a).has(sessionId)).toBe(false);
  nothingStaleShown(out);
  expect(runsB.count("call-s1")).toBe(1);
  expect(runsA.count("call-s1")).toBe(0);
}, 30_000);

it("a message through A while B waits on the card ends A's stale turn and leaves the card to B", async () => {
  const { target, a, b, out, card, sessionId } = await staleAtA(file, "1700009300.000002", "s2");
  await a.manager.receive(message("hello again", { target }));
  await eventually(() => !waitingAt(a).has(sessionId), "A's stale turn to end");
  // The card is still open, and B still waits on it.
  expect(out.card(card.pendingId)?.buttons.length).toBeGreaterThan(0);
  expect(waitingAt(b).has(sessionId)).toBe(true);

  const pressed = await b.manager.press(cardPress(target, card.pendingId, "once", ANA));
  expect(pressed.status).toBe("accepted");
  await outputs.until(() => answered(out, "wrote"), "B's turn to finish after its call", 10_000);
  await outputs.until(() => answered(out, "re: hello again"), "the next message answered", 10_000);
  nothingStaleShown(out);
  expect(runsB.count("call-s2")).toBe(1);
  expect(runsA.count("call-s2")).toBe(0);
}, 30_000);

it("a command through A after B finished the turn leaves no stale turn behind it: the next message runs", async () => {
  const { target, a, b, out, card, sessionId } = await staleAtA(file, "1700009300.000003", "s3");
  const pressed = await b.manager.press(cardPress(target, card.pendingId, "once", ANA));
  expect(pressed.status).toBe("accepted");
  await outputs.until(() => answered(out, "wrote"), "B's turn to finish after its call", 10_000);
  await b.manager.idle();

  // A command runs where the session is held: here, under a lease taken for the moment.
  await a.manager.receive(message("/status", { target }));
  expect(waitingAt(a).has(sessionId)).toBe(false);
  await a.manager.receive(message("hello again", { target }));
  await outputs.until(() => answered(out, "re: hello again"), "the next message answered", 10_000);
  nothingStaleShown(out);
  expect(runsB.count("call-s3")).toBe(1);
  expect(runsA.count("call-s3")).toBe(0);
}, 30_000);
