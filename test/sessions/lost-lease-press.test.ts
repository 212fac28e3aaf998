/**
 * A press taken by a process whose parked turn lost the session's lease: A parks a turn at an
 * approval card, its renewals hang past the TTL and B's failover takes the session over and waits
 * on the same card. When A recovers and the click reaches A, the decision goes to B (the holder),
 * which runs the call exactly once and finishes the turn; A's stale parked turn does not take it.
 */
import { expect, it } from "vitest";
import type { PendingHub } from "../../src/approvals/pending-hub.js";
import { eventually } from "../support/eventually.js";
import { cardPress } from "../support/card-press.js";
import { RecordingOutputs } from "../support/recording-output.js";
import { ANA, message, thread } from "./helpers/harness.js";
import { WritingProvider } from "./helpers/provider-steps.js";
import { redisPerFile } from "./helpers/redis-per-file.js";
import { openRedisStack, type RedisStack } from "./helpers/redis-stack.js";
import { severable } from "./helpers/severable.js";
import { ToolRuns } from "./helpers/test-tools.js";

/** The sessions whose turn is parked at a person in `stack`'s process. */
const waitingAt = (stack: RedisStack): ReadonlySet<string> =>
  (stack.manager as unknown as { readonly hub: PendingHub }).hub.waitingSessions();

const outputs = new RecordingOutputs();
const runsA = new ToolRuns();
const runsB = new ToolRuns();
const redis = redisPerFile(() => {
  runsA.release();
  runsB.release();
});

it("a press taken by a process whose parked turn lost the lease goes to the holder: the call runs once, there", async () => {
  const target = thread("1700009200.000001");
  // A's coordination, severed once the card is up: B is the one that takes the session over.
  const link = severable();
  const common = {
    url: redis.url,
    provider: new WritingProvider(),
    providerName: "writing",
    outputs,
    approvers: ["slack:U_BOSS"],
  };
  const a = await openRedisStack({
    ...common,
    name: "A",
    runs: runsA,
    wrap: link.wrap,
    timing: { ttlMs: 1_000, renewMs: 300 },
  });
  redis.stacks.push(a);
  const b = await openRedisStack({ ...common, name: "B", runs: runsB });
  redis.stacks.push(b);

  await a.manager.receive(message("write p1", { target }));
  const out = outputs.for(target);
  const card = await outputs.until(() => out.latestCards.find((c) => c.buttons.length > 0), "the card");
  const sessionId = out.turns[0]!.sessionId;
  link.sever();
  // B's failover takes the session once A's lease lapses, and waits on the same card.
  await eventually(() => waitingAt(b).has(sessionId), "B to take the session and wait on the card", 10_000);
  link.mend();

  const pressed = await a.manager.press(cardPress(target, card.pendingId, "once", ANA));
  expect(pressed.status).toBe("accepted");
  await outputs.until(
    () =>
      out.closedTurns.some((t) =>
        t.events.some((e) => e.type === "turn-completed" && e.finalText === "wrote"),
      ) || undefined,
    "B's turn to finish after its call",
    10_000,
  );
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
