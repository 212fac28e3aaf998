/**
 * A press taken by a process whose parked turn lost the session's lease: A parks a turn at an
 * approval card, its renewals hang past the TTL and B's failover takes the session over and waits
 * on the same card. When A recovers and the click reaches A, the decision goes to B (the holder),
 * which runs the call exactly once and finishes the turn; A's stale parked turn does not take it.
 */
import { expect, it } from "vitest";
import { eventually } from "../support/eventually.js";
import { cardPress } from "../support/card-press.js";
import { ANA } from "./helpers/harness.js";
import { answered, staleAtA, waitingAt, writingPairPerFile } from "./helpers/writing-stacks.js";

const file = writingPairPerFile();
const { outputs, runsA, runsB } = file;

it("a press taken by a process whose parked turn lost the lease goes to the holder: the call runs once, there", async () => {
  // A's coordination is severed once the card is up: B's failover takes the session over once
  // A's lease lapses, and waits on the same card.
  const { target, a, b, out, card, sessionId } = await staleAtA(file, "1700009200.000001", "p1");

  const pressed = await a.manager.press(cardPress(target, card.pendingId, "once", ANA));
  expect(pressed.status).toBe("accepted");
  await outputs.until(() => answered(out, "wrote"), "B's turn to finish after its call", 10_000);
  await b.manager.idle();
  // A's stale parked turn took nothing and ended quietly.
  await eventually(() => !waitingAt(a).has(sessionId), "A's stale turn to end");
  // Nothing of it was shown after the lease was lost: no failure, no "stopped" call.
  expect(out.closedTurns.flatMap((t) => t.events).filter((e) => e.type === "error")).toHaveLength(0);
  expect(
    out.closedTurns
      .flatMap((t) => t.events)
      .filter((e) => e.type === "tool-call-finished" && e.status !== "ok"),
  ).toHaveLength(0);
  expect(runsB.count("call-p1")).toBe(1);
  expect(runsA.count("call-p1")).toBe(0);
}, 30_000);
