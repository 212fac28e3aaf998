/**
 * A process that loses a session's lease while a turn runs (its renewals hang, so its own deadline
 * gives the lease up) starts no other turn: a message it had taken in from the shared queue meanwhile
 * is left to the next holder, which runs it exactly once — never on the process without the lease,
 * and never twice from both the record's queue and the shared queue.
 */
import { expect, it } from "vitest";
import type {
  ProviderClient,
  ProviderRequest,
  ProviderStreamEvent,
} from "../../src/engine/provider/provider.js";
import { sessionLeaseKey } from "../../src/sessions/lease-lock.js";
import { SessionRecords } from "../../src/sessions/session-records.js";
import { sharedQueueName } from "../../src/sessions/shared-queue.js";
import { userMessageText } from "../support/engine-fixtures.js";
import { eventually } from "../support/eventually.js";
import { RecordingOutputs } from "../support/recording-output.js";
import { message, thread } from "./helpers/harness.js";
import { answer, callTool, lastUserText } from "./helpers/provider-steps.js";
import { redisPerFile } from "./helpers/redis-per-file.js";
import { openRedisStack } from "./helpers/redis-stack.js";
import { severable } from "./helpers/severable.js";
import { ToolRuns } from "./helpers/test-tools.js";

/** "slow <x>" calls slow_task, "read <x>" calls read_note (both as call-<x>); after a call: "done". */
class CallingProvider implements ProviderClient {
  readonly requests: ProviderRequest[] = [];

  async *stream(request: ProviderRequest): AsyncGenerator<ProviderStreamEvent> {
    this.requests.push(request);
    const text = lastUserText(request);
    if (text === undefined) return yield* answer("done");
    const slow = /slow (\S+)/.exec(text);
    if (slow) return yield* callTool(`call-${slow[1]}`, "slow_task");
    const read = /read (\S+)/.exec(text);
    if (read) return yield* callTool(`call-${read[1]}`, "read_note", { name: read[1] });
    yield* answer(`re: ${text}`);
  }

  /** Requests whose last message is a user message containing `marker`. */
  asking(marker: string): ProviderRequest[] {
    return this.requests.filter((r) => userMessageText(r.messages.at(-1)).includes(marker));
  }
}

const outputs = new RecordingOutputs();
const runs = new ToolRuns();
const redis = redisPerFile(() => runs.release());

it("a process whose lease is lost mid-turn starts no other turn; the message it took in runs once, on the next holder", async () => {
  const providerA = new CallingProvider();
  const providerB = new CallingProvider();
  const target = thread("1700009100.000001");
  // A's coordination, severed once it took the next message in: B is the one that takes the
  // session over.
  let takenIn = 0;
  const link = severable({ onItems: (items) => (takenIn += items.length) });
  const a = await openRedisStack({
    url: redis.url,
    name: "A",
    provider: providerA,
    providerName: "calling",
    outputs,
    runs,
    wrap: link.wrap,
    timing: { ttlMs: 1_000, renewMs: 300 },
  });
  redis.stacks.push(a);
  const b = await openRedisStack({
    url: redis.url,
    name: "B",
    provider: providerB,
    providerName: "calling",
    outputs,
    runs,
  });
  redis.stacks.push(b);

  await a.manager.receive(message("slow x1", { target }));
  await runs.started("call-x1");
  const sessionId = outputs.for(target).turns[0]!.sessionId;
  // The next message, while the turn runs: A holds the session and takes it in from the shared queue.
  await a.manager.receive(message("read y1", { target }));
  await eventually(() => takenIn > 0, "A to take the message in");
  // A's deadline gives the lease up while the call still runs, which stops it.
  link.sever();

  const records = new SessionRecords(b.store.space("sessions"));
  await eventually(
    async () => {
      const record = await records.get(sessionId);
      return (
        runs.count("call-y1") > 0 &&
        record?.pendingTurn === undefined &&
        record?.queue.length === 0 &&
        (await b.coordination.items(sharedQueueName(sessionId), 0)).length === 0 &&
        (await b.coordination.holder(sessionLeaseKey(sessionId))) === undefined
      );
    },
    "the next holder to run the message and let the session go",
    15_000,
  );
  await b.manager.idle();

  expect(runs.count("call-y1")).toBe(1);
  expect(providerA.asking("read y1")).toHaveLength(0);
  expect(providerB.asking("read y1")).toHaveLength(1);
}, 30_000);
