/**
 * Several processes on one Redis: an entry of a session's shared queue its holder cannot read (a
 * newer version's, or damaged) is removed, as refused input is — and the thread it was sent in,
 * the session's own, is told that a message there could not be read and was not run, instead of
 * the message vanishing without a word. The entries around it are taken as usual.
 */
import { expect, it } from "vitest";
import type {
  ProviderClient,
  ProviderRequest,
  ProviderStreamEvent,
} from "../../src/engine/provider/provider.js";
import { sharedQueueName } from "../../src/sessions/shared-queue.js";
import { sessionLeaseKey } from "../../src/sessions/lease-lock.js";
import { RecordingOutputs } from "../support/recording-output.js";
import { message, thread } from "./helpers/harness.js";
import { answer, lastUserText } from "./helpers/provider-steps.js";
import { redisPerFile } from "./helpers/redis-per-file.js";
import { openRedisStack } from "./helpers/redis-stack.js";

/** Answers every message "re: <its text>". */
const provider: ProviderClient = {
  async *stream(request: ProviderRequest): AsyncGenerator<ProviderStreamEvent> {
    yield* answer(`re: ${lastUserText(request) ?? ""}`);
  },
};

const redis = redisPerFile();

it("an unreadable entry in the shared queue is removed and its thread told, the others answered", async () => {
  const outputs = new RecordingOutputs();
  const a = await openRedisStack({ url: redis.url, name: "A", provider, providerName: "test", outputs });
  redis.stacks.push(a);
  const target = thread("1700000700.000001", "C700");
  const finals = () =>
    outputs
      .for(target)
      .closedTurns.map((t) => t.events.find((e) => e.type === "turn-completed"))
      .map((e) => (e?.type === "turn-completed" ? e.finalText : undefined));
  await a.manager.receive(message("first", { target }));
  await outputs.until(() => finals().length === 1 || undefined, "the first answer");
  await a.manager.idle();
  const sessionId = outputs.for(target).turns[0]!.sessionId;

  // An entry this version cannot read waits in the session's queue (written by a newer one).
  await a.coordination.offer({
    queue: sharedQueueName(sessionId),
    item: JSON.stringify({ message: { text: "from the future", shape: "v99" }, steer: false }),
    claims: [],
    index: { set: "active-sessions", member: sessionId },
    lease: { key: sessionLeaseKey(sessionId), ttlMs: 1, owner: "nobody" },
  });
  await a.manager.receive(message("second", { target }));
  await outputs.until(() => finals().length === 2 || undefined, "the second answer");
  await a.manager.idle();

  expect(finals()).toEqual(["re: first", "re: second"]);
  const notices = outputs.for(target).texts.filter((t) => /could not be read/.test(t));
  expect(notices).toEqual([
    "A message sent in this thread could not be read (sent by a newer version of the service, or damaged), so it was not run: please send it again.",
  ]);
  expect(await a.coordination.items(sharedQueueName(sessionId), 0)).toEqual([]);
}, 30_000);
