/**
 * Stacks on a shared Redis whose provider writes a note behind an approval card: opening one or a
 * pair of them, parking a turn at the card in A while B takes the session over, and reading what
 * the thread and a process show — the set-up the lease-lapse and parked-turn tests share.
 */
import type { PendingHub } from "../../../src/approvals/pending-hub.js";
import type { Coordination } from "../../../src/store/coordination/coordination.js";
import { eventually } from "../../support/eventually.js";
import { type RecordingOutput, RecordingOutputs } from "../../support/recording-output.js";
import { message, thread } from "./harness.js";
import { WritingProvider } from "./provider-steps.js";
import { type RedisPerFile, redisPerFile } from "./redis-per-file.js";
import { openRedisStack, type RedisStack, type SHORT_LEASES } from "./redis-stack.js";
import { severable } from "./severable.js";
import { ToolRuns } from "./test-tools.js";

/** A test file's Redis server, outputs and the tool runs of its processes A and B. */
export interface WritingPairFile {
  readonly redis: RedisPerFile;
  readonly outputs: RecordingOutputs;
  readonly runsA: ToolRuns;
  readonly runsB: ToolRuns;
}

/** One Redis server for the file (see redisPerFile), both processes' blocked tools released after each test. */
export function writingPairPerFile(): WritingPairFile {
  const outputs = new RecordingOutputs();
  const runsA = new ToolRuns();
  const runsB = new ToolRuns();
  const redis = redisPerFile(() => {
    runsA.release();
    runsB.release();
  });
  return { redis, outputs, runsA, runsB };
}

/** How one process of the pair is opened. */
export interface WritingStackSide {
  readonly runs: ToolRuns;
  /** What its session layer sees the coordination through. */
  readonly wrap?: (c: Coordination) => Coordination;
  /** Its lease timing; SHORT_LEASES by default. */
  readonly timing?: typeof SHORT_LEASES;
}

/** Open a writing stack named `name` on `redis`, recorded in `outputs`, closed after the test. */
export async function openWritingStack(
  redis: RedisPerFile,
  outputs: RecordingOutputs,
  name: string,
  side: WritingStackSide,
): Promise<RedisStack> {
  const stack = await openRedisStack({
    url: redis.url,
    provider: new WritingProvider(),
    providerName: "writing",
    outputs,
    approvers: ["slack:U_BOSS"],
    name,
    ...side,
  });
  redis.stacks.push(stack);
  return stack;
}

/** How one process of the pair is opened, beyond the file's runs for it. */
export type PairSide = Omit<WritingStackSide, "runs">;

/** Open processes A and B on the file's Redis, both closed after the test. */
export async function openWritingPair(
  file: WritingPairFile,
  a: PairSide,
  b: PairSide = {},
): Promise<{ a: RedisStack; b: RedisStack }> {
  return {
    a: await openWritingStack(file.redis, file.outputs, "A", { ...a, runs: file.runsA }),
    b: await openWritingStack(file.redis, file.outputs, "B", { ...b, runs: file.runsB }),
  };
}

/**
 * A parks a turn at a card for "write <call>" in `ts`'s thread; A's link is severed until B has
 * taken the session over and waits on the same card.
 */
export async function staleAtA(file: WritingPairFile, ts: string, call: string) {
  const { outputs } = file;
  const target = thread(ts);
  const link = severable();
  const { a, b } = await openWritingPair(file, { wrap: link.wrap, timing: { ttlMs: 1_000, renewMs: 300 } });
  await a.manager.receive(message(`write ${call}`, { target }));
  const out = outputs.for(target);
  const card = await outputs.until(() => out.latestCards.find((c) => c.buttons.length > 0), "the card");
  const sessionId = out.turns[0]!.sessionId;
  link.sever();
  await eventually(() => waitingAt(b).has(sessionId), "B to take the session and wait on the card", 10_000);
  link.mend();
  return { target, a, b, out, card, sessionId };
}

/** The sessions whose turn is parked at a person in `stack`'s process. */
export const waitingAt = (stack: RedisStack): ReadonlySet<string> =>
  (stack.manager as unknown as { readonly hub: PendingHub }).hub.waitingSessions();

/** Whether a turn in the thread answered `text`. */
export const answered = (out: RecordingOutput, text: string) =>
  out.closedTurns.some((t) => t.events.some((e) => e.type === "turn-completed" && e.finalText === text)) ||
  undefined;
