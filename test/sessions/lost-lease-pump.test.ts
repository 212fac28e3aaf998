/**
 * A process that loses a session's lease while a turn runs (its renewals hang, so its own deadline
 * gives the lease up) starts no other turn: a message it had taken in from the shared queue meanwhile
 * is left to the next holder, which runs it exactly once — never on the process without the lease,
 * and never twice from both the record's queue and the shared queue.
 */
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import type {
  ProviderClient,
  ProviderRequest,
  ProviderStreamEvent,
} from "../../src/engine/provider/provider.js";
import { sessionLeaseKey } from "../../src/sessions/lease-lock.js";
import { SessionRecords } from "../../src/sessions/session-records.js";
import { sharedQueueName } from "../../src/sessions/shared-queue.js";
import type { Coordination } from "../../src/store/coordination/coordination.js";
import { stepFinished, userMessageText } from "../support/engine-fixtures.js";
import { eventually } from "../support/eventually.js";
import { RecordingOutputs } from "../support/recording-output.js";
import { type RedisServer, startRedisServer } from "../support/redis-server.js";
import { message, thread } from "./helpers/harness.js";
import { closeRedisStacks, openRedisStack, type RedisStack } from "./helpers/redis-stack.js";
import { ToolRuns } from "./helpers/test-tools.js";

/** "slow <x>" calls slow_task, "read <x>" calls read_note (both as call-<x>); after a call: "done". */
class CallingProvider implements ProviderClient {
  readonly requests: ProviderRequest[] = [];

  async *stream(request: ProviderRequest): AsyncGenerator<ProviderStreamEvent> {
    this.requests.push(request);
    const last = request.messages.at(-1);
    if (last?.role === "tool") {
      yield { type: "text-delta", delta: "done" };
      yield stepFinished("done");
      return;
    }
    const text = userMessageText(last);
    const slow = /slow (\S+)/.exec(text);
    if (slow) {
      yield stepFinished("", [{ id: `call-${slow[1]}`, name: "slow_task", arguments: "{}" }]);
      return;
    }
    const read = /read (\S+)/.exec(text);
    if (read) {
      yield stepFinished("", [
        { id: `call-${read[1]}`, name: "read_note", arguments: JSON.stringify({ name: read[1] }) },
      ]);
      return;
    }
    yield { type: "text-delta", delta: `re: ${text}` };
    yield stepFinished(`re: ${text}`);
  }

  /** Requests whose last message is a user message containing `marker`. */
  asking(marker: string): ProviderRequest[] {
    return this.requests.filter((r) => userMessageText(r.messages.at(-1)).includes(marker));
  }
}

let redis: RedisServer;
let stacks: RedisStack[] = [];
const outputs = new RecordingOutputs();
const runs = new ToolRuns();

beforeAll(async () => {
  redis = await startRedisServer();
}, 20_000);

afterEach(async () => {
  runs.release();
  await closeRedisStacks(stacks);
  stacks = [];
});

afterAll(async () => {
  await redis?.stop();
});

it("a process whose lease is lost mid-turn starts no other turn; the message it took in runs once, on the next holder", async () => {
  const providerA = new CallingProvider();
  const providerB = new CallingProvider();
  const target = thread("1700009100.000001");
  // A's coordination: once `cut`, its renewals hang (neither succeed nor fail: its deadline gives
  // the lease up) and its failover scan finds nothing (so B is the one that takes the session over).
  let cut = false;
  let takenIn = 0;
  const wrap = (c: Coordination): Coordination =>
    new Proxy(c, {
      get(inner, prop) {
        const value = Reflect.get(inner, prop, inner);
        if (prop === "renew")
          return (...args: Parameters<Coordination["renew"]>) =>
            cut ? new Promise<boolean>(() => undefined) : inner.renew(...args);
        if (prop === "unleasedMembers")
          return async (...args: Parameters<Coordination["unleasedMembers"]>) =>
            cut ? [] : inner.unleasedMembers(...args);
        if (prop === "items")
          return async (...args: Parameters<Coordination["items"]>) => {
            const items = await inner.items(...args);
            takenIn += items.length;
            return items;
          };
        return typeof value === "function" ? value.bind(inner) : value;
      },
    });
  const a = await openRedisStack({
    url: redis.url,
    name: "A",
    provider: providerA,
    providerName: "calling",
    outputs,
    runs,
    wrap,
    timing: { ttlMs: 1_000, renewMs: 300 },
  });
  stacks.push(a);
  const b = await openRedisStack({
    url: redis.url,
    name: "B",
    provider: providerB,
    providerName: "calling",
    outputs,
    runs,
  });
  stacks.push(b);

  await a.manager.receive(message("slow x1", { target }));
  await runs.started("call-x1");
  const sessionId = outputs.for(target).turns[0]!.sessionId;
  // The next message, while the turn runs: A holds the session and takes it in from the shared queue.
  await a.manager.receive(message("read y1", { target }));
  await eventually(() => takenIn > 0, "A to take the message in");
  // A's deadline gives the lease up while the call still runs, which stops it.
  cut = true;

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
