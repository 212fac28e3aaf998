/**
 * A turn parked at a card in a process that lost the session's lease while it waited, when no
 * other process took the session since (A is the only process): the turn here is still the
 * session's latest state. A press reaching A hands the decision to that turn — its call runs
 * once — instead of ending it as stale (the card said approved, the call never ran); and A's own
 * failover takes the lease back for it, so a press then finds the session held here. A thread
 * command through A meanwhile takes the free lease for the moment and leaves the turn waiting
 * (its copy, unchanged in the store, is not reloaded, and the turn keeps its engine).
 */
import { expect, it } from "vitest";
import { sessionLeaseKey } from "../../src/sessions/lease-lock.js";
import { cardPress } from "../support/card-press.js";
import { eventually } from "../support/eventually.js";
import type { RecordingOutput } from "../support/recording-output.js";
import { RecordingOutputs } from "../support/recording-output.js";
import { ANA, message, thread } from "./helpers/harness.js";
import { redisPerFile } from "./helpers/redis-per-file.js";
import { severable } from "./helpers/severable.js";
import { ToolRuns } from "./helpers/test-tools.js";
import { answered, openWritingStack } from "./helpers/writing-stacks.js";

const outputs = new RecordingOutputs();
const runs = new ToolRuns();
const redis = redisPerFile(() => runs.release());

/** A alone parks a turn at a card for "write <call>"; its link is severed until its lease lapsed in Redis. */
async function lapsedAtA(ts: string, call: string) {
  const target = thread(ts);
  const link = severable();
  const a = await openWritingStack(redis, outputs, "A", {
    runs,
    wrap: link.wrap,
    timing: { ttlMs: 1_000, renewMs: 300 },
  });
  await a.manager.receive(message(`write ${call}`, { target }));
  const out = outputs.for(target);
  const card = await outputs.until(() => out.latestCards.find((c) => c.buttons.length > 0), "the card");
  const sessionId = out.turns[0]!.sessionId;
  const holder = () => a.coordination.holder(sessionLeaseKey(sessionId));
  link.sever();
  await eventually(async () => (await holder()) === undefined, "A's lease to lapse", 10_000);
  return { target, a, out, card, link, holder };
}

/** The call ran once and the turn finished after it; nothing failed or stopped was shown. */
async function ranOnce(out: RecordingOutput, call: string): Promise<void> {
  await outputs.until(() => answered(out, "wrote"), "the turn to finish after its call", 10_000);
  expect(runs.count(`call-${call}`)).toBe(1);
  const events = out.closedTurns.flatMap((t) => t.events);
  expect(events.filter((e) => e.type === "error")).toHaveLength(0);
  expect(events.filter((e) => e.type === "tool-call-finished" && e.status !== "ok")).toHaveLength(0);
}

it("a press reaching A, whose lease lapsed with no one taking the session, runs the approved call", async () => {
  // Still severed: A's failover finds nothing, so the press is what reaches the parked turn.
  const { target, a, out, card, link } = await lapsedAtA("1700009400.000001", "l1");
  const pressed = await a.manager.press(cardPress(target, card.pendingId, "once", ANA));
  expect(pressed.status).toBe("accepted");
  link.mend();
  await ranOnce(out, "l1");
  await a.manager.receive(message("hello again", { target }));
  await outputs.until(() => answered(out, "re: hello again"), "the next message answered", 10_000);
}, 30_000);

it("A's failover takes the lease back for its own parked turn; the press then runs the call", async () => {
  const { target, a, out, card, link, holder } = await lapsedAtA("1700009400.000002", "l2");
  link.mend();
  await eventually(async () => (await holder()) !== undefined, "A's failover to take the lease back", 10_000);
  const pressed = await a.manager.press(cardPress(target, card.pendingId, "once", ANA));
  expect(pressed.status).toBe("accepted");
  await ranOnce(out, "l2");
  await a.manager.receive(message("hello again", { target }));
  await outputs.until(() => answered(out, "re: hello again"), "the next message answered", 10_000);
}, 30_000);

it("a message through A, whose lease lapsed with no one taking the session, waits behind the parked turn; the press runs the call", async () => {
  // Still severed: A's failover finds nothing, so the message's offer takes the lease back.
  const { target, a, out, card, link } = await lapsedAtA("1700009400.000003", "l3");
  await a.manager.receive(message("hello again", { target }));
  link.mend();
  const pressed = await a.manager.press(cardPress(target, card.pendingId, "once", ANA));
  expect(pressed.status).toBe("accepted");
  await ranOnce(out, "l3");
  await outputs.until(() => answered(out, "re: hello again"), "the next message answered", 10_000);
}, 30_000);

it("a thread command through A, whose lease lapsed with no one taking the session, leaves the parked turn waiting; the press runs the call", async () => {
  // Still severed: A's failover finds nothing, so the command takes the free lease itself.
  const { target, a, out, card, link } = await lapsedAtA("1700009400.000004", "l4");
  await a.manager.receive(message("/status", { target }));
  link.mend();
  const pressed = await a.manager.press(cardPress(target, card.pendingId, "once", ANA));
  expect(pressed.status).toBe("accepted");
  await ranOnce(out, "l4");
  await a.manager.receive(message("hello again", { target }));
  await outputs.until(() => answered(out, "re: hello again"), "the next message answered", 10_000);
}, 30_000);
