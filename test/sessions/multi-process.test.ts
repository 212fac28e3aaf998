/**
 * Several session stacks (SessionManagers, each with its own store and coordination connections,
 * as separate processes would have) on one real redis-server: every message is answered once and
 * in order whichever stack takes it, a press on one stack resolves the turn parked on another,
 * "stop" on one stops the turn streaming on another, commands and "new" reach the session where it
 * is held (never a stale copy) and act on the session they were routed by (never one another
 * process started or switched the thread to meanwhile, which "stop" or "model" would overwrite),
 * "new" never makes another session the thread's over the session another process holds, a thread
 * whose entry names a missing record gets one session that every process runs (and a process
 * never writes the record of a session it never held), input past the queue cap (steering too) is refused and leaves the shared
 * queue at once (a wake-up never is), and a holder that stops renewing (its coordination closed without releasing) is
 * taken over within the lease TTL, its card still working.
 */
import pino from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  type ProviderClient,
  ProviderError,
  type ProviderRequest,
  type ProviderStreamEvent,
} from "../../src/engine/provider/provider.js";
import { ALLOW_ANYWAY, ReviewerDenials } from "../../src/approvals/reviewer-denials.js";
import { MAX_QUEUED_MESSAGES } from "../../src/sessions/session-record.js";
import { SessionRecords } from "../../src/sessions/session-records.js";
import { MultiProcessSessions } from "../../src/sessions/multi-process.js";
import type { Coordination } from "../../src/store/coordination/coordination.js";
import type { KeyValueSpace, Store, StoreNamespace } from "../../src/store/store.js";
import { sessionKeyOf } from "../../src/core/thread-target.js";
import { TOOL_RESULT } from "../../src/engine/tool-results.js";
import { controlChannel, type TurnControl } from "../../src/sessions/turn-controls.js";
import { sharedQueueName } from "../../src/sessions/shared-queue.js";
import { RecordingOutputs } from "../support/recording-output.js";
import { type RedisServer, startRedisServer } from "../support/redis-server.js";
import { ANA, BEN, message, thread } from "./helpers/harness.js";
import { answer, callTool, lastUserText } from "./helpers/provider-steps.js";
import { ToolRuns } from "./helpers/test-tools.js";
import {
  closeRedisStacks,
  openRedisStack,
  type RedisStack as Stack,
  type RedisStackSetup,
} from "./helpers/redis-stack.js";
import { stepFinished, userMessageText } from "../support/engine-fixtures.js";
import { eventually } from "../support/eventually.js";
import { monitorCommands } from "../support/redis-monitor.js";
import { outcomeLine } from "../support/card-outcome.js";
import { cardPress } from "../support/card-press.js";

/**
 * A model for every stack: "write <x>" calls write_note, then answers "wrote"; "hang" streams
 * until stopped, or released (then it answers "working"); anything else is answered "re: <its
 * text>". Records every request.
 */
class RuleProvider implements ProviderClient {
  readonly requests: ProviderRequest[] = [];
  readonly aborted: string[] = [];
  private readonly failed = new Set<string>();
  private readonly hanging = new Map<string, () => void>();

  async *stream(request: ProviderRequest): AsyncGenerator<ProviderStreamEvent> {
    this.requests.push({ ...request, messages: structuredClone(request.messages) });
    const text = lastUserText(request);
    if (text === undefined) return yield* answer("wrote");
    if (text.includes("flaky") && !this.failed.has(text)) {
      this.failed.add(text);
      throw new ProviderError("bad_request", "The model refused this once.");
    }
    const slow = /slow (\S+)/.exec(text);
    if (slow) return yield* callTool(`call-${slow[1]}`, "slow_task");
    const write = /write (\S+)/.exec(text);
    if (write) return yield* callTool(`call-${write[1]}`, "write_note", { text: write[1] });
    const ask = /ask (\S+)/.exec(text);
    if (ask)
      return yield* callTool(`call-${ask[1]}`, "ask_user", { question: "Which colour?", options: ["red"] });
    if (text.includes("hang")) {
      yield { type: "text-delta", delta: "working" };
      await new Promise<void>((resolve) => {
        this.hanging.set(text, resolve);
        if (request.signal?.aborted) resolve();
        request.signal?.addEventListener("abort", () => resolve(), { once: true });
      });
      this.hanging.delete(text);
      if (!request.signal?.aborted) {
        yield stepFinished("working");
        return;
      }
      this.aborted.push(text);
      throw Object.assign(new Error("aborted"), { name: "AbortError" });
    }
    yield* answer(`re: ${/m\d+-\d+/.exec(text)?.[0] ?? text}`);
  }

  /** Let the hanging stream whose user message contains `marker` finish as answered. */
  release(marker: string): void {
    for (const [text, resolve] of this.hanging) if (text.includes(marker)) resolve();
  }

  /** Requests whose last message is a user message containing `marker`. */
  asking(marker: string): ProviderRequest[] {
    return this.requests.filter((r) => userMessageText(r.messages.at(-1)).includes(marker));
  }
}

/**
 * Where a wrapped call waits: `wait` (awaited by the call) resolves `reached` and waits until
 * `go` is called.
 */
function pausePoint() {
  let reach: () => void = () => undefined;
  let go: () => void = () => undefined;
  const reached = new Promise<void>((resolve) => {
    reach = resolve;
  });
  const gate = new Promise<void>((resolve) => {
    go = resolve;
  });
  return {
    reached,
    wait: () => {
      reach();
      return gate;
    },
    go: () => go(),
  };
}

/** `target` with its method `name` replaced: `replace` gets the original (bound) and returns the new one. */
function intercepting<T extends object, K extends keyof T>(
  target: T,
  name: K,
  replace: (original: T[K]) => T[K],
): T {
  return new Proxy(target, {
    get(inner, prop) {
      const value = Reflect.get(inner, prop, inner);
      const bound = typeof value === "function" ? value.bind(inner) : value;
      return prop === name ? replace(bound) : bound;
    },
  });
}

describe("several session stacks on one Redis", () => {
  let redis: RedisServer;
  const outputs = new RecordingOutputs();
  const provider = new RuleProvider();
  const runs = new ToolRuns();
  let stacks: Stack[] = [];

  const openStack = (name: string) => openStackWith(name, {});

  /**
   * Open a stack whose session layer sees the coordination through `wrap` (the stack keeps the
   * real one to close) and its store through `wrapStore`, with leases (and failover scans) on
   * `timing`, queueing messages as `queueMode` says.
   */
  const openStackWith = (
    name: string,
    options: Pick<RedisStackSetup, "wrap" | "wrapStore" | "timing" | "queueMode" | "turnsPerPerson">,
  ): Promise<Stack> =>
    openRedisStack({
      url: redis.url,
      name,
      provider,
      providerName: "rules",
      outputs,
      runs,
      approvers: ["slack:U_BOSS"],
      ...options,
    });

  beforeAll(async () => {
    redis = await startRedisServer();
  }, 20_000);

  afterEach(async () => {
    await closeRedisStacks(stacks);
    stacks = [];
  });

  afterAll(async () => {
    await redis?.stop();
  });

  /** Approve a card on `stack` as its requester, in the thread it was posted in. */
  async function approveOn(stack: Stack, pendingId: string): Promise<void> {
    const asked = outputs.placeOf(pendingId) ?? thread();
    const pressed = await stack.manager.press(cardPress(asked, pendingId, "once", ANA));
    expect(pressed.status).toBe("accepted");
  }

  /** The session's record as stored now. */
  const storedRecord = (stack: Stack, sessionId: string) =>
    new SessionRecords(stack.store.space("sessions")).get(sessionId);

  /** The session of the thread's first turn, once it started. */
  const sessionOf = async (target: ReturnType<typeof thread>) =>
    (await outputs.until(() => outputs.for(target).turns[0], "the first turn")).sessionId;

  /** Open stacks A, its coordination seen through what `pausing` makes of it, and B. */
  async function openPausingA<P extends { readonly wrapped: Coordination }>(
    pausing: (coordination: Coordination) => P,
  ): Promise<[Stack, Stack, P]> {
    let paused: P | undefined;
    const wrap = (c: Coordination) => {
      paused = pausing(c);
      return paused.wrapped;
    };
    stacks = await Promise.all([openStackWith("A", { wrap }), openStack("B")]);
    if (!paused) throw new Error("A's coordination was not wrapped");
    return [stacks[0]!, stacks[1]!, paused];
  }

  /**
   * `coordination` whose first insertIfAbsent (a new session's record) waits, once written, until
   * `go` is called; `written` resolves when it got there.
   */
  function pausingFirstInsert(coordination: Coordination) {
    const point = pausePoint();
    let paused = false;
    const wrapped = intercepting(coordination, "insertIfAbsent", (insert) => async (...args) => {
      if (paused) return insert(...args);
      paused = true;
      const inserted = await insert(...args);
      await point.wait();
      return inserted;
    });
    return { wrapped, written: point.reached, go: point.go };
  }

  /**
   * `store` whose `nth` read of the thread entry `threadKey` (the thread → session index) is
   * answered with what it read only once `go` is called: everything another process does
   * meanwhile happens between that read and what this one does next. `read` resolves at that read.
   */
  function pausingIndexRead(threadKey: string, nth: number) {
    const point = pausePoint();
    let reads = 0;
    const pausing = (space: KeyValueSpace) =>
      intercepting(
        space,
        "get",
        (get) =>
          (async (key: string) => {
            const value = await get(key);
            if (key === `key:${threadKey}` && ++reads === nth) await point.wait();
            return value;
          }) as KeyValueSpace["get"],
      );
    const wrap = (store: Store) =>
      intercepting(
        store,
        "space",
        (space) => (namespace: StoreNamespace) =>
          namespace === "sessions" ? pausing(space(namespace)) : space(namespace),
      );
    return { wrap, read: point.reached, go: point.go };
  }

  /**
   * `coordination` whose first fenced write of a thread entry (a "new" switching the thread to
   * its fresh session) waits, before it is made, until `go` is called; `reached` resolves there.
   */
  function pausingIndexSwitch(coordination: Coordination) {
    const point = pausePoint();
    let paused = false;
    const wrapped = intercepting(coordination, "fencedWrite", (write) => async (fence, writes) => {
      if (!paused && writes.some((w) => w.op === "set" && w.key.startsWith("key:"))) {
        paused = true;
        await point.wait();
      }
      return write(fence, writes);
    });
    return { wrapped, reached: point.reached, go: point.go };
  }

  /** Resolves once a turn in the thread finished with the model's answer after its tool call. */
  const finishedWriting = (out: ReturnType<RecordingOutputs["for"]>) =>
    outputs.until(
      () =>
        out.closedTurns.some((t) =>
          t.events.some((e) => e.type === "turn-completed" && e.finalText === "wrote"),
        ),
      "the turn to finish after its call",
      10_000,
    );

  /** The thread's first card with buttons, once posted. */
  const openCard = (out: ReturnType<RecordingOutputs["for"]>) =>
    outputs.until(() => out.latestCards.find((c) => c.buttons.length > 0), "the card");

  /** Resolves once `stack` runs (or parks) the session. */
  const takenBy = (stack: Stack, sessionId: string) =>
    outputs.until(
      () => stack.manager.isBusy(sessionId) === true || undefined,
      `${stack.name} to take the session`,
      10_000,
    );

  const finalTexts = (ts: string) =>
    outputs
      .for(thread(ts))
      .closedTurns.map((t) => t.events.find((e) => e.type === "turn-completed"))
      .map((e) => (e?.type === "turn-completed" ? e.finalText : undefined));

  it("answers every message exactly once, in arrival order, with the thread's earlier messages", async () => {
    stacks = await Promise.all(["A", "B", "C"].map(openStack));
    const threads = Array.from({ length: 10 }, (_, t) => `1700000100.${String(t).padStart(6, "0")}`);
    for (let m = 1; m <= 3; m++)
      await Promise.all(
        threads.map((ts, t) =>
          stacks[(t + m) % 3]!.manager.receive(message(`m${t}-${m}`, { target: thread(ts) })),
        ),
      );
    await outputs.until(() => threads.every((ts) => finalTexts(ts).length === 3), "three answers per thread");
    threads.forEach((ts, t) => {
      expect(finalTexts(ts)).toEqual([`re: m${t}-1`, `re: m${t}-2`, `re: m${t}-3`]);
      for (let m = 1; m <= 3; m++) {
        const asked = provider.asking(`m${t}-${m}`);
        expect(asked).toHaveLength(1);
        const users = asked[0]!.messages.filter((x) => x.role === "user").map((x) => userMessageText(x));
        expect(users.map((u) => /m\d+-\d+/.exec(u)?.[0])).toEqual(
          Array.from({ length: m }, (_, i) => `m${t}-${i + 1}`),
        );
      }
    });
  }, 30_000);

  it("a simple turn in a new thread costs at most nine Redis round trips, and three for its person's turn slot (a script counts once)", async () => {
    stacks = [await openStack("A")];
    const [a] = stacks as [Stack];
    const answered = (ts: string) => outputs.until(() => finalTexts(ts).length === 1, "the answer");
    await a.manager.receive(message("warm up", { target: thread("1700000900.000001") }));
    await answered("1700000900.000001");
    await a.manager.idle();
    const commands = await monitorCommands(redis.port, async () => {
      await a.manager.receive(message("hello there", { target: thread("1700000900.000002") }));
      await answered("1700000900.000002");
      await a.manager.idle();
    });
    // Thread lookup, new session, its open questions (this process does not hold it yet, so its
    // copy cannot say no turn asked one), offer (+ lease), the workspace's downloaded files (the
    // page after those this process read: another process may have recorded some since; not the
    // head, which only a first read needs), turn start, history, turn end, release — the
    // background failover scan (every lease renewal interval) aside. Every store read is one MGET.
    const sent = commands.filter((c) => !c.inScript && !c.line.includes("SMEMBERS"));
    const turn = sent.filter((c) => !c.line.includes("turn-slot"));
    expect(
      turn.map((c) => c.name),
      turn.map((c) => c.line).join("\n"),
    ).toEqual(["MGET", "EVAL", "HGETALL", "EVAL", "MGET", "EVAL", "EVAL", "EVAL", "EVAL"]);
    // The person's turn slot, shared by the processes: taken, given back, its release announced.
    const slot = sent.filter((c) => c.line.includes("turn-slot"));
    expect(
      slot.map((c) => c.name),
      slot.map((c) => c.line).join("\n"),
    ).toEqual(["EVAL", "EVAL", "PUBLISH"]);
  }, 30_000);

  it("a press on B resolves the turn parked on A; the call runs once", async () => {
    stacks = await Promise.all(["A", "B"].map(openStack));
    const [a, b] = stacks as [Stack, Stack];
    const target = thread("1700000200.000001");
    await a.manager.receive(message("write press1", { target }));
    const out = outputs.for(target);
    const card = await openCard(out);
    await approveOn(b, card.pendingId);
    await outputs.until(() => finalTexts(target.thread!).includes("wrote"), "the turn to finish");
    expect(runs.count("call-press1")).toBe(1);
    // The parked turn itself went on (on A): no second turn was opened elsewhere.
    expect(out.turns).toHaveLength(1);
    await a.manager.idle();
    expect(await a.manager.isBusy(out.turns[0]!.sessionId)).toBe(false);
  }, 30_000);

  it("a press on a process whose copy of the session is older than the card still resolves the turn", async () => {
    stacks = await Promise.all(["A", "B"].map(openStack));
    const [a, b] = stacks as [Stack, Stack];
    const target = thread("1700001400.000001");
    // A ran the session's first turn and keeps that copy; B runs the next one and parks it at a card.
    await a.manager.receive(message("m14-1", { target }));
    await outputs.until(() => finalTexts(target.thread!).includes("re: m14-1"), "the first answer");
    await a.manager.idle();
    await b.manager.receive(message("write stale1", { target }));
    const out = outputs.for(target);
    const card = await openCard(out);
    await approveOn(a, card.pendingId);
    await outputs.until(() => finalTexts(target.thread!).includes("wrote"), "the turn to finish");
    expect(runs.count("call-stale1")).toBe(1);
  }, 30_000);

  it("a typed answer taken by a process whose copy of the session predates its first turn answers the question", async () => {
    stacks = await Promise.all(["A", "B"].map(openStack));
    const [a, b] = stacks as [Stack, Stack];
    const target = thread("1700002900.000001");
    // B makes the thread's session (a command): its copy has run no turn. A runs the first turn,
    // which asks Ana a question.
    await b.manager.command(target, ANA, "status", []);
    await a.manager.receive(message("ask colour1", { target }));
    const out = outputs.for(target);
    const card = await openCard(out);
    expect(card.kind).toBe("question");
    expect((await b.manager.receive(message("green", { target }))).status).toBe("answered");
    await outputs.until(() => finalTexts(target.thread!).includes("wrote"), "the turn to finish");
    expect(outcomeLine(out.card(card.pendingId))).toBe("Answered by Ana (id U_ANA): green");
    expect(out.turns).toHaveLength(1);
  }, 30_000);

  it('"stop" taken by B stops the turn streaming on A', async () => {
    stacks = await Promise.all(["A", "B"].map(openStack));
    const [a, b] = stacks as [Stack, Stack];
    const target = thread("1700000300.000001");
    await a.manager.receive(message("please hang", { target }));
    await outputs.until(() => provider.asking("please hang").length > 0, "the stream to start");
    // B runs nothing of the session, yet knows it is busy (A holds it).
    const sessionId = outputs.for(target).turns[0]!.sessionId;
    expect(b.manager.isBusy(sessionId)).toBeInstanceOf(Promise);
    expect(await b.manager.isBusy(sessionId)).toBe(true);
    await b.manager.receive(message("stop", { target }));
    await outputs.until(() => provider.aborted.includes("please hang") || undefined, "the stream to stop");
    await outputs.until(() => outputs.for(target).closedTurns.length === 1, "the turn to close");
    await eventually(async () => (await b.manager.isBusy(sessionId)) === false, "A to let go of the session");
  }, 30_000);

  it("a turn waiting on A for its person's slot leaves the session free: B takes it and runs the turn", async () => {
    stacks = [await openStackWith("A", { turnsPerPerson: 1 }), await openStack("B")];
    const [a] = stacks as [Stack, Stack];
    const [busy, waiting] = [thread("1700000310.000001"), thread("1700000310.000002")];
    const hang = "please hang, slot holder";
    await a.manager.receive(message(hang, { target: busy }));
    await outputs.until(() => provider.asking(hang).length > 0, "the stream to start");
    await a.manager.receive(message("ana waits", { target: waiting }));
    expect(outputs.for(waiting).texts.join("\n")).toMatch(/starts when one of them ends/);
    // A let the session go: failover on B finds it unleased with work, takes it and runs the turn.
    await outputs.until(
      () => finalTexts(waiting.thread!).includes("re: ana waits"),
      "B to run the waiting turn",
    );
    expect(provider.aborted).not.toContain(hang);
    provider.release(hang);
    await outputs.until(() => finalTexts(busy.thread!).length === 1, "the hanging turn to end");
    await a.manager.idle();
    expect(provider.asking("ana waits")).toHaveLength(1);
  }, 30_000);

  it.each([
    // Follow-ups are taken into the record in memory: they stay in the shared queue until it is saved.
    ["follow-ups", "followup", BEN, MAX_QUEUED_MESSAGES, 1],
    // Steering is saved as it is taken (its turn's requester sends it).
    ["steering", "steer", ANA, 0, 2],
  ] as const)(
    "%s taken by B join A's queue only up to the cap: the thread is told once, and the refused ones leave the shared queue at once",
    async (_what, queueMode, user, kept, n) => {
      stacks = await Promise.all(["A", "B"].map((name) => openStackWith(name, { queueMode })));
      const [a, b] = stacks as [Stack, Stack];
      // A DM: the whole queue is open to one person (in a shared thread a person gets a share).
      const target = thread(`1700000350.00000${n}`, "D350");
      const hang = `hang while flooded with ${queueMode}`;
      await a.manager.receive(message(hang, { target }));
      await outputs.until(() => provider.asking(hang).length > 0, "the stream to start");
      const sessionId = outputs.for(target).turns[0]!.sessionId;
      // B's copy of the session is not the holder's: its count of the queue is not to be trusted.
      for (let i = 0; i < MAX_QUEUED_MESSAGES + 5; i++)
        await b.manager.receive(message(`flood ${i}`, { target, user }));
      const notice = () =>
        outputs.for(target).texts.filter((t) => t.includes("queued in this thread already"));
      await outputs.until(() => notice().length > 0 || undefined, "the full-queue notice");
      const shared = async () =>
        (await b.coordination.items(sharedQueueName(sessionId), 0)).map(
          (raw) => JSON.parse(raw).message.text,
        );
      const taken = Array.from({ length: kept }, (_, i) => `flood ${i}`);
      await eventually(
        async () => (await shared()).join() === taken.join(),
        "the refused messages to leave the shared queue",
      );
      expect(await a.manager.command(target, ANA, "status", [])).toMatch(
        new RegExp(`a turn is running, ${MAX_QUEUED_MESSAGES} queued`),
      );
      expect(notice()).toHaveLength(1);
      // Stop drops exactly the fifty the session holds.
      expect(await a.manager.command(target, ANA, "stop", [])).toMatch(
        new RegExp(`Dropped ${MAX_QUEUED_MESSAGES} queued messages\\.`),
      );
      await eventually(
        async () => (await b.manager.isBusy(sessionId)) === false,
        "A to let go of the session",
      );
      expect(await shared()).toEqual([]);
    },
    60_000,
  );

  it("a wake-up offered through B to a session whose queue is full is queued all the same, as with one process", async () => {
    stacks = await Promise.all(["A", "B"].map(openStack));
    const [a, b] = stacks as [Stack, Stack];
    // A DM: the whole queue is open to one person (in a shared thread a person gets a share).
    const target = thread("1700000380.000001", "D380");
    await a.manager.receive(message("hang while full", { target }));
    await outputs.until(() => provider.asking("hang while full").length > 0, "the stream to start");
    const sessionId = outputs.for(target).turns[0]!.sessionId;
    const queued = (n: number) => async () =>
      (await a.manager.command(target, ANA, "status", [])).includes(`a turn is running, ${n} queued`);
    for (let i = 0; i < MAX_QUEUED_MESSAGES; i++)
      await b.manager.receive(message(`full ${i}`, { target, user: BEN }));
    await eventually(queued(MAX_QUEUED_MESSAGES), "the queue to fill");
    const wake = { sessionId, target, prompt: "wake-up 1", requester: ANA };
    expect(await b.manager.wake(wake)).toEqual({ status: "queued" });
    await eventually(queued(MAX_QUEUED_MESSAGES + 1), "the wake-up to join the queue");
    expect(outputs.for(target).texts.filter((t) => t.includes("queued in this thread already"))).toEqual([]);
    expect(await a.manager.command(target, ANA, "stop", [])).toMatch(
      new RegExp(`Dropped ${MAX_QUEUED_MESSAGES + 1} queued messages\\.`),
    );
    await eventually(async () => (await b.manager.isBusy(sessionId)) === false, "A to let go of the session");
  }, 60_000);

  it("input that the holder fails to take in during a turn is taken before its next turn, and nothing is left unhandled", async () => {
    let failNext = false;
    const failing = (c: Coordination) =>
      intercepting(c, "items", (items) => async (...args) => {
        if (!failNext) return items(...args);
        failNext = false;
        throw new Error("Redis went away for a moment");
      });
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => void unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      stacks = await Promise.all([openStackWith("A", { wrap: failing }), openStack("B")]);
      const [a, b] = stacks as [Stack, Stack];
      const target = thread("1700000370.000001");
      await a.manager.receive(message("please hang on collect1", { target }));
      await outputs.until(() => provider.asking("hang on collect1").length > 0, "the stream to start");
      failNext = true;
      await b.manager.receive(message("after the failure", { target, user: BEN }));
      await eventually(() => !failNext, "A to try taking the input in");
      await a.manager.command(target, ANA, "stop", []);
      await outputs.until(
        () => finalTexts(target.thread!).includes("re: after the failure"),
        "the next turn",
      );
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  }, 30_000);

  it("a retry pressed on B re-runs the turn that failed on A, with A's history", async () => {
    stacks = await Promise.all(["A", "B"].map(openStack));
    const [a, b] = stacks as [Stack, Stack];
    const target = thread("1700000700.000001");
    await a.manager.receive(message("m7-1 is flaky", { target }));
    const out = outputs.for(target);
    await outputs.until(() => out.closedTurns.length === 1, "the failed turn");
    await a.manager.idle();
    const pressed = await b.manager.press({ kind: "control", control: "retry", target, user: ANA });
    expect(pressed.status).toBe("accepted");
    await outputs.until(() => finalTexts(target.thread!).includes("re: m7-1"), "the retried answer");
    const retried = provider.asking("m7-1 is flaky").at(-1)!;
    expect(retried.messages.filter((m) => m.role === "user").map(userMessageText)).toEqual(["m7-1 is flaky"]);
  }, 30_000);

  it("a retry passed to a process that has let go of the session goes on to its holder, and never re-runs a later turn on a stale copy", async () => {
    stacks = await Promise.all(["A", "B"].map(openStack));
    const [a, b] = stacks as [Stack, Stack];
    const target = thread("1700000750.000001");
    // A ran the session's turn, which failed; then B took the session for the next message.
    await a.manager.receive(message("m75-1 is flaky", { target }));
    await outputs.until(() => outputs.for(target).closedTurns.length === 1, "the failed turn");
    await a.manager.idle();
    const hang = "please hang on retry1";
    await b.manager.receive(message(hang, { target }));
    await outputs.until(() => provider.asking("hang on retry1").length > 0, "the stream to start");
    const sessionId = await sessionOf(target);
    // A retry passed to A as the holder, arriving after A let go: A passes it on to B, which holds
    // the session and runs a turn, so refuses it, as a retry during a turn is with one process.
    const control: TurnControl = { kind: "retry", sessionId, user: ANA };
    const passedToB: TurnControl[] = [];
    const unsubscribe = await b.coordination.subscribe(controlChannel("B"), (sent) => {
      const passed = JSON.parse(sent) as TurnControl;
      if (passed.kind === "retry") passedToB.push(passed);
    });
    await b.coordination.publish(controlChannel("A"), JSON.stringify(control));
    await eventually(() => passedToB.length > 0, "A to pass the retry on to B");
    await unsubscribe();
    expect(passedToB).toEqual([control]);
    provider.release(hang);
    await outputs.until(() => outputs.for(target).closedTurns.length === 2, "B's turn to end");
    await Promise.all([a.manager.idle(), b.manager.idle()]);
    // The thread's next message, taken by A, runs as itself.
    await a.manager.receive(message("m75-3", { target }));
    await outputs.until(() => finalTexts(target.thread!).includes("re: m75-3"), "the next answer");
    expect(provider.asking("hang on retry1")).toHaveLength(1);
    expect(outputs.for(target).turns).toHaveLength(3);
  }, 30_000);

  it('"Allow anyway" pressed on B lands in the grants of A, which holds the session, and survives its save', async () => {
    stacks = await Promise.all(["A", "B"].map(openStack));
    const [a, b] = stacks as [Stack, Stack];
    const target = thread("1700000800.000001");
    await a.manager.receive(message("please hang on grant1", { target }));
    await outputs.until(() => provider.asking("hang on grant1").length > 0, "the stream to start");
    const out = outputs.for(target);
    const sessionId = out.turns[0]!.sessionId;
    // A reviewer denial of that session, its card in the thread (as the engine's reporter posts it).
    const denials = new ReviewerDenials({
      store: b.store,
      host: { outputFor: () => out, grant: async () => false, audit: () => undefined },
      config: { approvers: [], ttlMs: 60_000 },
      logger: pino({ level: "silent" }),
      now: () => new Date(),
    });
    const requester = { platform: "slack", userId: ANA.id, name: ANA.name };
    await denials.reporterFor(() => ({ sessionId, target, requester }))({
      callId: "c-denied",
      tool: "write_note",
      args: { text: "x" },
      summary: "write_note x",
      reason: "not today",
    });
    const card = await outputs.until(
      () => out.latestCards.find((c) => c.buttons.length > 0),
      "the denial card",
    );
    const pressed = await b.manager.press(cardPress(target, card.pendingId, ALLOW_ANYWAY, ANA));
    expect(pressed.status).toBe("accepted");
    await eventually(
      async () => (await a.manager.command(target, ANA, "grants", [])).includes("write_note"),
      "A to hold the grant",
    );
    await a.manager.receive(message("stop", { target }));
    await outputs.until(() => out.closedTurns.length === 1, "the turn to close");
    await a.manager.idle();
    const saved = await new SessionRecords(a.store.space("sessions")).get(sessionId);
    expect(saved?.grants).toEqual([expect.objectContaining({ kind: "once", tool: "write_note" })]);
  }, 30_000);

  it("a command passed to a process that has let go of the session goes on to its holder, never onto a stale copy", async () => {
    stacks = await Promise.all(["A", "B"].map(openStack));
    const [a, b] = stacks as [Stack, Stack];
    const target = thread("1700001000.000001");
    // A ran the session's first turn (it keeps its copy and that lease's fence), then B took it.
    await a.manager.receive(message("m10-1", { target }));
    await outputs.until(() => finalTexts(target.thread!).includes("re: m10-1"), "the first answer");
    await a.manager.idle();
    await b.manager.receive(message("please hang on cmd1", { target }));
    await outputs.until(() => provider.asking("hang on cmd1").length > 0, "the stream to start");
    const sessionId = await sessionOf(target);
    // A command passed to A as the holder, arriving after A let go of the session.
    const control: TurnControl = {
      kind: "command",
      sessionId,
      target,
      user: ANA,
      command: { name: "model", model: "model-b" },
    };
    await b.coordination.publish(controlChannel("A"), JSON.stringify(control));
    await eventually(
      async () => (await storedRecord(b, sessionId))?.model === "model-b",
      "the model change to be saved by B",
    );
    await a.manager.receive(message("stop", { target }));
    await outputs.until(() => outputs.for(target).closedTurns.length === 2, "the turn to close");
    await b.manager.idle();
    expect((await storedRecord(b, sessionId))?.model).toBe("model-b");
  }, 30_000);

  it("a command that creates the thread's session runs where the session is held once another process took it", async () => {
    const [a, b, paused] = await openPausingA(pausingFirstInsert);
    const target = thread("1700001100.000001");
    // A creates the thread's session for the command; B takes it for a message before A goes on.
    const reply = a.manager.command(target, ANA, "model", ["model-a"]);
    await paused.written;
    await b.manager.receive(message("please hang on cmd2", { target }));
    await outputs.until(() => provider.asking("hang on cmd2").length > 0, "the stream to start");
    const sessionId = await sessionOf(target);
    await eventually(
      async () => (await storedRecord(b, sessionId))?.pendingTurn !== undefined,
      "B's turn start to be saved",
    );
    paused.go();
    await reply;
    // The running turn is still on record, and in the index failover scans.
    expect((await storedRecord(b, sessionId))?.pendingTurn).toBeDefined();
    expect(await b.coordination.members("active-sessions")).toContain(sessionId);
    await eventually(
      async () => (await storedRecord(b, sessionId))?.model === "model-a",
      "the model change to be saved",
    );
    await b.manager.receive(message("stop", { target }));
    await outputs.until(() => outputs.for(target).closedTurns.length === 1, "the turn to close");
    await b.manager.idle();
    expect((await storedRecord(b, sessionId))?.model).toBe("model-a");
  }, 30_000);

  it('"new" taken by A starts the thread afresh for B too: B runs its next message in the new session', async () => {
    stacks = await Promise.all(["A", "B"].map(openStack));
    const [a, b] = stacks as [Stack, Stack];
    const target = thread("1700001200.000001");
    await b.manager.receive(message("m12-1", { target }));
    await outputs.until(() => finalTexts(target.thread!).includes("re: m12-1"), "the first answer");
    await b.manager.idle();
    const reply = await a.manager.command(target, ANA, "new", []);
    const fresh = /\(([^)]+)\)/.exec(reply)?.[1];
    expect(fresh).toBeDefined();
    await b.manager.receive(message("m12-2", { target }));
    await outputs.until(() => finalTexts(target.thread!).includes("re: m12-2"), "the second answer");
    expect(outputs.for(target).turns.at(-1)?.sessionId).toBe(fresh);
    const asked = provider.asking("m12-2")[0]!;
    expect(asked.messages.filter((m) => m.role === "user").map(userMessageText)).toEqual(["m12-2"]);
  }, 30_000);

  it.each([
    [1, "starting one, it found the session A started"],
    [2, "its claim of the thread came second"],
  ])(
    '"new" taken by B, which found the thread without a session (%i index reads before A started it: %s), never overwrites the thread entry of the session A holds',
    async (nth) => {
      const target = thread(`1700001500.00000${nth}`);
      const threadKey = sessionKeyOf(target);
      const paused = pausingIndexRead(threadKey, nth);
      stacks = [await openStack("A"), await openStackWith("B", { wrapStore: paused.wrap })];
      const [a, b] = stacks as [Stack, Stack];
      const reply = b.manager.command(target, BEN, "new", []);
      await paused.read;
      const hang = `please hang on new${nth}`;
      await a.manager.receive(message(hang, { target }));
      await outputs.until(() => provider.asking(hang).length > 0, "the stream to start");
      const sessionId = await sessionOf(target);
      paused.go();
      const said = await reply;
      const index = new SessionRecords(b.store.space("sessions"));
      expect(await index.currentId(threadKey)).toBe(sessionId);
      // The session A just started is the fresh one.
      expect(said).toContain(`Started a new session (${sessionId})`);
      // A's turn runs on in the thread's session, and the thread's next message joins it, on B too.
      expect(provider.aborted).not.toContain(hang);
      await a.manager.command(target, ANA, "stop", []);
      await outputs.until(() => outputs.for(target).closedTurns.length === 1, "the turn to close");
      await eventually(
        async () => (await b.manager.isBusy(sessionId)) === false,
        "A to let go of the session",
      );
      await b.manager.receive(message("m15-2", { target }));
      await outputs.until(() => finalTexts(target.thread!).includes("re: m15-2"), "the next answer");
      expect(outputs.for(target).turns.at(-1)?.sessionId).toBe(sessionId);
      expect(await index.currentId(threadKey)).toBe(sessionId);
    },
    30_000,
  );

  it('"stop" taken by B, which found the thread without a session before A started one, leaves the record A runs alone: the steering A saved stays queued and runs once', async () => {
    const target = thread("1700001700.000001");
    const paused = pausingIndexRead(sessionKeyOf(target), 1);
    stacks = await Promise.all([
      openStackWith("A", { queueMode: "steer" }),
      openStackWith("B", { queueMode: "steer", wrapStore: paused.wrap }),
    ]);
    const [a, b] = stacks as [Stack, Stack];
    const reply = b.manager.command(target, BEN, "stop", []);
    await paused.read;
    // A starts the thread's session and a turn, and saves steering for it in the record's queue.
    await a.manager.receive(message("slow stopping1", { target }));
    await runs.started("call-stopping1");
    const sessionId = await sessionOf(target);
    await a.manager.receive(message("m17-1", { target }));
    const queued = async () => (await storedRecord(a, sessionId))?.queue.map((m) => m.text);
    await eventually(async () => (await queued())?.join() === "m17-1", "the steering to be saved");
    paused.go();
    const said = await reply;
    // B's stop came before the thread had a session: it neither writes A's record nor ends A's turn.
    expect(await queued()).toEqual(["m17-1"]);
    expect(said).toBe("Nothing is running.");
    runs.release();
    await outputs.until(() => finalTexts(target.thread!).includes("re: m17-1"), "the steered answer");
    await eventually(async () => (await b.manager.isBusy(sessionId)) === false, "A to let go of the session");
    await b.manager.receive(message("m17-2", { target }));
    await outputs.until(() => finalTexts(target.thread!).includes("re: m17-2"), "the next answer");
    expect(runs.count("call-stopping1")).toBe(1);
    expect(finalTexts(target.thread!).filter((t) => t?.startsWith("re: m17"))).toEqual([
      "re: m17-1",
      "re: m17-2",
    ]);
    expect(provider.asking("m17-2")).toHaveLength(1);
    expect(outputs.for(target).turns.every((turn) => turn.sessionId === sessionId)).toBe(true);
  }, 30_000);

  it('"model" taken by B for the session the thread had before A switched it to a fresh one ("new") changes that session, never the fresh one A runs', async () => {
    const target = thread("1700001800.000001");
    const paused = pausingIndexRead(sessionKeyOf(target), 1);
    stacks = [await openStack("A"), await openStackWith("B", { wrapStore: paused.wrap })];
    const [a, b] = stacks as [Stack, Stack];
    await a.manager.receive(message("m18-1", { target }));
    await outputs.until(() => finalTexts(target.thread!).includes("re: m18-1"), "the first answer");
    const first = await sessionOf(target);
    await eventually(async () => (await b.manager.isBusy(first)) === false, "A to let go of the session");
    // B finds the thread on its first session; before B changes it, A switches the thread and runs a turn.
    const reply = b.manager.command(target, ANA, "model", ["other-model"]);
    await paused.read;
    const fresh = /session \(([^)]+)\)/.exec(await a.manager.command(target, ANA, "new", []))?.[1];
    const hang = "please hang on model1";
    await a.manager.receive(message(hang, { target }));
    await outputs.until(() => provider.asking(hang).length > 0, "the stream to start");
    expect(outputs.for(target).turns.at(-1)?.sessionId).toBe(fresh);
    paused.go();
    expect(await reply).toBe("Model set to other-model.");
    expect((await storedRecord(a, fresh!))?.model).toBe("test-model");
    expect((await storedRecord(a, first))?.model).toBe("other-model");
    // A's turn runs on in the fresh session, and the thread's next message joins it, on B too.
    expect(provider.aborted).not.toContain(hang);
    await a.manager.command(target, ANA, "stop", []);
    await outputs.until(() => outputs.for(target).closedTurns.length === 2, "the turn to close");
    await eventually(async () => (await b.manager.isBusy(fresh!)) === false, "A to let go of the session");
    await b.manager.receive(message("m18-2", { target }));
    await outputs.until(() => finalTexts(target.thread!).includes("re: m18-2"), "the next answer");
    expect(outputs.for(target).turns.at(-1)?.sessionId).toBe(fresh);
    expect((await storedRecord(b, fresh!))?.model).toBe("test-model");
  }, 30_000);

  it("\"new\" on a process that let go of the thread's session before it could switch the thread leaves the thread to the session's later holder", async () => {
    const [a, b, paused] = await openPausingA(pausingIndexSwitch);
    const target = thread("1700001600.000001");
    const threadKey = sessionKeyOf(target);
    await a.manager.receive(message("please hang on switch1", { target }));
    await outputs.until(() => provider.asking("hang on switch1").length > 0, "the stream to start");
    const sessionId = await sessionOf(target);
    // A retires the session (its turn stopped) and lets it go; before A switches the thread, B
    // takes the session for the thread's next message.
    const reply = a.manager.command(target, ANA, "new", []);
    await Promise.race([paused.reached, reply]);
    await eventually(async () => (await b.manager.isBusy(sessionId)) === false, "A to let go of the session");
    await b.manager.receive(message("m16-1", { target }));
    await outputs.until(() => finalTexts(target.thread!).includes("re: m16-1"), "B's answer");
    paused.go();
    expect(await reply).toContain("Another process holds this thread's session now");
    const index = new SessionRecords(b.store.space("sessions"));
    expect(await index.currentId(threadKey)).toBe(sessionId);
    // A's copy is the thread's session still: A runs the next message in it.
    await eventually(async () => (await a.manager.isBusy(sessionId)) === false, "B to let go of the session");
    await a.manager.receive(message("m16-2", { target }));
    await outputs.until(() => finalTexts(target.thread!).includes("re: m16-2"), "A's answer");
    expect(outputs.for(target).turns.at(-1)?.sessionId).toBe(sessionId);
    expect(
      provider
        .asking("m16-2")[0]!
        .messages.filter((m) => m.role === "user")
        .map(userMessageText),
    ).toEqual(["please hang on switch1", "m16-1", "m16-2"]);
  }, 30_000);

  /** Make the thread's entry name a session whose record is missing. */
  const nameMissingSession = (stack: Stack, threadKey: string) =>
    stack.store.space("sessions").set(`key:${threadKey}`, `missing-${threadKey}`);

  /** Both messages answered in the thread, in one session, the one its entry names (on B too). */
  async function expectOneSession(b: Stack, target: ReturnType<typeof thread>, hang: string, next: string) {
    const sessionId = await sessionOf(target);
    expect(provider.aborted).not.toContain(hang);
    // The hanging turn ends as answered, so the next message runs whether A took it in before the
    // end or after (a "stop" would drop it when taken in before, and that order is timing).
    provider.release(hang);
    await outputs.until(() => finalTexts(target.thread!).includes(`re: ${next}`), "the next answer");
    expect(outputs.for(target).turns.every((turn) => turn.sessionId === sessionId)).toBe(true);
    expect(provider.asking(next)).toHaveLength(1);
    expect(await new SessionRecords(b.store.space("sessions")).currentId(sessionKeyOf(target))).toBe(
      sessionId,
    );
  }

  it("a thread whose entry names a missing record, its first message on A racing B's, which read the entry before A replaced the missing session, ends on A's session in both", async () => {
    const target = thread("1700001900.000001");
    const threadKey = sessionKeyOf(target);
    const paused = pausingIndexRead(threadKey, 1);
    stacks = [await openStack("A"), await openStackWith("B", { wrapStore: paused.wrap })];
    const [a, b] = stacks as [Stack, Stack];
    await nameMissingSession(a, threadKey);
    const received = b.manager.receive(message("m19-1", { target }));
    await paused.read;
    const hang = "please hang on missing1";
    await a.manager.receive(message(hang, { target }));
    await outputs.until(() => provider.asking(hang).length > 0, "the stream to start");
    paused.go();
    await received;
    await expectOneSession(b, target, hang, "m19-1");
  }, 30_000);

  it("a thread whose entry names a missing record, B's first message racing A's while A holds the missing session's lease, ends on A's session in both", async () => {
    const target = thread("1700001900.000002");
    const missingLease = `session:missing-${sessionKeyOf(target)}`;
    let refused: () => void = () => undefined;
    const bRefused = new Promise<void>((resolve) => {
      refused = resolve;
    });
    // B's coordination tells when B was refused the missing session's lease (A holds it).
    const watchRefusals = (c: Coordination) =>
      intercepting(c, "acquire", (acquire) => async (key, ...rest) => {
        const grant = await acquire(key, ...rest);
        if (key === missingLease && !grant) refused();
        return grant;
      });
    let paused: ReturnType<typeof pausingIndexSwitch> | undefined;
    const pausing = (c: Coordination) => {
      paused = pausingIndexSwitch(c);
      return paused.wrapped;
    };
    stacks = await Promise.all([
      openStackWith("A", { wrap: pausing }),
      openStackWith("B", { wrap: watchRefusals }),
    ]);
    const [a, b] = stacks as [Stack, Stack];
    await nameMissingSession(a, sessionKeyOf(target));
    const hang = "please hang on missing2";
    const first = a.manager.receive(message(hang, { target }));
    await paused!.reached;
    const second = b.manager.receive(message("m19-2", { target }));
    await bRefused;
    paused!.go();
    await Promise.all([first, second]);
    await outputs.until(() => provider.asking(hang).length > 0, "the stream to start");
    await expectOneSession(b, target, hang, "m19-2");
  }, 30_000);

  it("a process that never held a session cannot write its record: the one its holder wrote stays", async () => {
    stacks = [await openStack("A")];
    const [a] = stacks as [Stack];
    const target = thread("1700001900.000003");
    await a.manager.receive(message("m19-3", { target }));
    await outputs.until(() => finalTexts(target.thread!).includes("re: m19-3"), "the answer");
    await a.manager.idle();
    const sessionId = await sessionOf(target);
    const stored = await a.store.space("sessions").get(`rec:${sessionId}`);
    const other = new MultiProcessSessions({
      coordination: a.coordination,
      sessions: a.store.space("sessions"),
      marksOf: () => [],
      processId: "C",
      logger: pino({ level: "silent" }),
    });
    await expect(
      other.records.put(sessionId, `rec:${sessionId}`, { overwritten: true }, false, undefined),
    ).rejects.toThrow(`session ${sessionId} was never held here`);
    expect(await a.store.space("sessions").get(`rec:${sessionId}`)).toEqual(stored);
  }, 30_000);

  it("stop taken by a process holding nothing ends a turn left parked in the store at once, not at the next failover scan", async () => {
    // B scans for orphans only every 10 minutes: the turn can only end now if stop ends it.
    stacks = await Promise.all([
      openStack("A"),
      openStackWith("B", { timing: { ttlMs: 600_000, renewMs: 600_000 } }),
    ]);
    const [a, b] = stacks as [Stack, Stack];
    const target = thread("1700001300.000001");
    await a.manager.receive(message("write stopped1", { target }));
    const out = outputs.for(target);
    await openCard(out);
    expect((await a.manager.drain(1_000)).parked).toBe(1);
    a.closed = true;
    await a.coordination.close();
    await a.store.close();
    expect(await b.manager.command(target, ANA, "stop", [])).toBe("Stopped the waiting turn.");
    await outputs.until(() => out.closedTurns.length === 1, "the stopped turn to end", 5_000);
    expect(outcomeLine(out.latestCards[0])).toBe("Cancelled: the turn was stopped");
    expect(runs.count("call-stopped1")).toBe(0);
    await b.manager.idle();
    expect((await storedRecord(b, out.turns[0]!.sessionId))?.pendingTurn).toBeUndefined();
  }, 30_000);

  it("stop taken by B while the holder A has died is not sent into the void: B runs it once A's lease lapses, and the turn never resumes", async () => {
    // B scans for orphans only every 10 minutes: only the stop itself can end the turn in time.
    stacks = await Promise.all([
      openStack("A"),
      openStackWith("B", { timing: { ttlMs: 600_000, renewMs: 600_000 } }),
    ]);
    const [a, b] = stacks as [Stack, Stack];
    const target = thread("1700001350.000001");
    await a.manager.receive(message("write orphaned1", { target }));
    const out = outputs.for(target);
    await openCard(out);
    // A dies holding the session: no release, no more renewals, nobody on its control channel.
    a.closed = true;
    await a.coordination.close();
    expect(await b.manager.command(target, ANA, "stop", [])).toBe("Stopped the waiting turn.");
    await outputs.until(() => out.closedTurns.length === 1, "the stopped turn to end", 5_000);
    expect(outcomeLine(out.latestCards[0])).toBe("Cancelled: the turn was stopped");
    expect(runs.count("call-orphaned1")).toBe(0);
    await b.manager.idle();
    expect((await storedRecord(b, out.turns[0]!.sessionId))?.pendingTurn).toBeUndefined();
    await a.store.close().catch(() => undefined);
  }, 30_000);

  it("a holder that stops renewing is taken over within the TTL; its card still works", async () => {
    stacks = await Promise.all(["A", "B"].map(openStack));
    const [a, b] = stacks as [Stack, Stack];
    const target = thread("1700000400.000001");
    await a.manager.receive(message("write dead1", { target }));
    const out = outputs.for(target);
    const card = await openCard(out);
    // A dies as far as the others can tell: no release, no more renewals, no more writes.
    a.closed = true;
    await a.coordination.close();
    // B's failover takes the session once A's lease lapses and parks the turn on the same card.
    const sessionId = out.turns[0]!.sessionId;
    await takenBy(b, sessionId);
    await approveOn(b, card.pendingId);
    await finishedWriting(out);
    expect(runs.count("call-dead1")).toBe(1);
    expect(out.latestCards.filter((c) => c.buttons.length > 0)).toHaveLength(0);
    await a.store.close().catch(() => undefined);
  }, 30_000);

  it("a turn whose holder died mid-call is resumed elsewhere: the call is reported interrupted, never re-run", async () => {
    stacks = await Promise.all(["A", "B"].map(openStack));
    const [a, b] = stacks as [Stack, Stack];
    const target = thread("1700000500.000001");
    await a.manager.receive(message("slow dying1", { target }));
    await runs.started("call-dying1");
    a.closed = true;
    await a.coordination.close();
    const out = outputs.for(target);
    await finishedWriting(out);
    expect(runs.count("call-dying1")).toBe(1);
    const resumed = provider.requests.at(-1)!.messages;
    const answer = resumed.find((m) => m.role === "tool" && m.tool_call_id === "call-dying1");
    expect(answer?.role === "tool" ? answer.content : "").toContain(TOOL_RESULT.interruptedWhileRunning);
    runs.release();
    await b.manager.idle();
    await a.store.close().catch(() => undefined);
  }, 30_000);

  it("shutdown releases the leases and leaves the parked turn for another process, card and all", async () => {
    stacks = await Promise.all(["A", "B"].map(openStack));
    const [a, b] = stacks as [Stack, Stack];
    const target = thread("1700000600.000001");
    await a.manager.receive(message("write parked1", { target }));
    const out = outputs.for(target);
    const card = await openCard(out);
    const report = await a.manager.drain(1_000);
    expect(report.parked).toBe(1);
    a.closed = true;
    await a.coordination.close();
    await a.store.close();
    const sessionId = out.turns[0]!.sessionId;
    await takenBy(b, sessionId);
    await approveOn(b, card.pendingId);
    await finishedWriting(out);
    expect(runs.count("call-parked1")).toBe(1);
  }, 30_000);
});
