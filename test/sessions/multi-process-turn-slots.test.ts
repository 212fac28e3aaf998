/**
 * The per-person turn cap across processes: two session stacks (as two processes would have) on
 * one real redis-server, one person allowed one turn at once. Their messages in two threads, taken
 * by either stack, never run two turns at once: the second waits (and says so) until the first
 * ends, then runs — and every message is answered. Nor does that waiting message hold up another
 * person's messages behind it in its thread, taken by either stack.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type {
  ProviderClient,
  ProviderRequest,
  ProviderStreamEvent,
} from "../../src/engine/provider/provider.js";
import { userMessageText } from "../support/engine-fixtures.js";
import { RecordingOutputs } from "../support/recording-output.js";
import { type RedisServer, startRedisServer } from "../support/redis-server.js";
import { BEN, message, thread } from "./helpers/harness.js";
import { closeRedisStacks, openRedisStack, type RedisStack as Stack } from "./helpers/redis-stack.js";

/**
 * A model that counts the streams running at once (and the most ever): "hold" streams until
 * `release`d, anything else for a few event-loop turns; each is answered "re: <its text>".
 */
class CountingProvider implements ProviderClient {
  running = 0;
  most = 0;
  readonly asked: string[] = [];
  private readonly holding: Array<() => void> = [];

  async *stream(request: ProviderRequest): AsyncGenerator<ProviderStreamEvent> {
    const text = userMessageText(request.messages.at(-1));
    this.asked.push(text);
    this.running++;
    this.most = Math.max(this.most, this.running);
    try {
      if (text.includes("hold")) await new Promise<void>((resolve) => this.holding.push(resolve));
      // Long enough for a turn running alongside (were the cap not kept) to overlap this one.
      else await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      this.running--;
    }
    const reply = `re: ${text}`;
    yield { type: "text-delta", delta: reply };
    yield { type: "step-finished", text: reply, toolCalls: [], finishReason: "stop", usage: undefined };
  }

  /** How many streams were asked for a message containing `marker`. */
  asking(marker: string): number {
    return this.asked.filter((text) => text.includes(marker)).length;
  }

  release(): void {
    for (const resolve of this.holding.splice(0)) resolve();
  }
}

describe("one person's turns on two processes sharing Redis, one turn at once", () => {
  let redis: RedisServer;
  const outputs = new RecordingOutputs();
  const provider = new CountingProvider();
  let stacks: Stack[] = [];

  /** A stack (short leases, as in multi-process.test.ts) letting one person one turn at once. */
  const openStack = (name: string): Promise<Stack> =>
    openRedisStack({ url: redis.url, name, provider, providerName: "counting", outputs, turnsPerPerson: 1 });

  beforeAll(async () => {
    redis = await startRedisServer();
  }, 20_000);

  afterEach(async () => {
    provider.release();
    await closeRedisStacks(stacks);
    stacks = [];
  });

  afterAll(async () => {
    await redis?.stop();
  });

  const finalTexts = (target: ReturnType<typeof thread>) =>
    outputs
      .for(target)
      .closedTurns.map((t) => t.events.find((e) => e.type === "turn-completed"))
      .map((e) => (e?.type === "turn-completed" ? e.finalText : undefined));

  it("a turn taken by B waits while A runs the person's one turn, then runs; never two at once", async () => {
    stacks = [await openStack("A"), await openStack("B")];
    const [a, b] = stacks as [Stack, Stack];
    const [first, second] = [thread("1700004000.000001"), thread("1700004000.000002")];
    await a.manager.receive(message("hold the slot", { target: first }));
    await outputs.until(() => provider.asking("hold the slot") > 0, "A's turn to start");
    await b.manager.receive(message("waits for it", { target: second }));
    await outputs.until(
      () => outputs.for(second).texts.some((t) => t.includes("starts when one of them ends")),
      "the waiting turn's notice",
    );
    expect(provider.asking("waits for it")).toBe(0);
    provider.release();
    await outputs.until(
      () => finalTexts(second).some((t) => t?.includes("waits for it")) && finalTexts(first).length === 1,
      "both turns to end",
    );
    // More of the person's messages in both threads, taken by both processes at once.
    await Promise.all([
      a.manager.receive(message("third", { target: second })),
      b.manager.receive(message("fourth", { target: first })),
      a.manager.receive(message("fifth", { target: first })),
      b.manager.receive(message("sixth", { target: second })),
    ]);
    await outputs.until(
      () => finalTexts(first).length === 3 && finalTexts(second).length === 3,
      "every message to be answered",
      20_000,
    );
    expect(provider.most).toBe(1);
    for (const text of ["waits for it", "third", "fourth", "fifth", "sixth"])
      expect(provider.asking(text)).toBe(1);
  }, 40_000);

  it("the person's waiting message holds up no one else in its thread, whichever process takes theirs", async () => {
    stacks = [await openStack("A"), await openStack("B")];
    const [a, b] = stacks as [Stack, Stack];
    const [elsewhere, general] = [thread("1700004000.000011"), thread("1700004000.000012")];
    await a.manager.receive(message("hold ana's slot", { target: elsewhere }));
    await outputs.until(() => provider.asking("hold ana's slot") > 0, "A's turn to start");
    await b.manager.receive(message("ana in general", { target: general }));
    await outputs.until(
      () => outputs.for(general).texts.some((t) => t.includes("starts when one of them ends")),
      "the waiting turn's notice",
    );
    // Taken by the process whose pump does not wait, then by the one whose pump does.
    await a.manager.receive(message("ben via A", { user: BEN, target: general }));
    await outputs.until(() => finalTexts(general).length === 1, "ben's turn taken by A", 5_000);
    await b.manager.receive(message("ben via B", { user: BEN, target: general }));
    await outputs.until(() => finalTexts(general).length === 2, "ben's turn taken by B", 5_000);
    expect(finalTexts(general)).toEqual(["re: ben via A", "re: ben via B"]);
    expect(provider.asking("ana in general")).toBe(0);

    provider.release();
    await outputs.until(() => finalTexts(general).length === 3, "ana's turn", 20_000);
    expect(finalTexts(general).at(-1)).toBe("re: ana in general");
  }, 40_000);
});
