/**
 * A finished turn's end in one process: after its pump ends it stays in memory and goes out with
 * the session's next write (a message soon after starts its turn in that same write), or on its
 * own a second later, when the session leaves memory, at `idle()` and at drain. Until it is saved,
 * a redelivery of the turn's message is still recognised, and a crash leaves a turn that recovery
 * finds done.
 */
import { describe, expect, it } from "vitest";
import { sessionKeyOf } from "../../src/core/thread-target.js";
import { SessionRecords } from "../../src/sessions/session-records.js";
import type { KeyValueSpace, Store } from "../../src/store/store.js";
import { eventually } from "../support/eventually.js";
import { RecordingOutput } from "../support/recording-output.js";
import { textStep } from "../support/scripted-provider.js";
import { type Harness, makeHarness, message, openStore, thread } from "./helpers/harness.js";

const USAGE = { inputTokens: 10, outputTokens: 5, totalTokens: 15 };

/** `store` with every write of a session record (`rec:` keys) counted. */
function countingRecordWrites(store: Store): { store: Store; writes: () => number } {
  let writes = 0;
  const count = (key: string) => {
    if (key.startsWith("rec:")) writes++;
  };
  const counted = (space: KeyValueSpace): KeyValueSpace => ({
    ...space,
    get: (key) => space.get(key),
    delete: (key) => space.delete(key),
    setIfAbsent: (key, value, ttl) => space.setIfAbsent(key, value, ttl),
    replaceIf: (key, expected, value, ttl) => space.replaceIf(key, expected, value, ttl),
    deleteIf: (key, expected) => space.deleteIf(key, expected),
    set: (key, value, ttl) => {
      count(key);
      return space.set(key, value, ttl);
    },
    ...(space.getMany ? { getMany: (keys: readonly string[]) => space.getMany!(keys) } : {}),
    ...(space.setMany
      ? {
          setMany: (entries: Parameters<NonNullable<KeyValueSpace["setMany"]>>[0]) => {
            for (const entry of entries) count(entry.key);
            return space.setMany!(entries);
          },
        }
      : {}),
  });
  return {
    store: {
      ...store,
      writesInOrder: store.writesInOrder,
      description: store.description,
      ping: () => store.ping(),
      close: () => store.close(),
      space: (namespace) =>
        namespace === "sessions" ? counted(store.space(namespace)) : store.space(namespace),
    },
    writes: () => writes,
  };
}

/** The thread's session as stored now. */
async function stored(store: Store) {
  const records = new SessionRecords(store.space("sessions"));
  const id = await records.currentId(sessionKeyOf(thread()));
  return id === undefined ? undefined : records.get(id);
}

/** Receive `text` and wait until its turn was rendered and the session's pump has ended. */
async function turnDone(h: Harness, text: string, keys?: string[]): Promise<string> {
  expect((await h.manager.receive(message(text, keys ? { keys } : {}))).status).toBe("started");
  const out = h.outputs.for(thread());
  const turns = out.closedTurns.length;
  await h.outputs.until(() => out.closedTurns.length > turns || undefined, "the turn's reply");
  const id = (await stored(h.store))!.id;
  await eventually(() => h.manager.isBusy(id) === false, "the pump's end");
  return id;
}

describe("a finished turn's end", () => {
  it("goes out with the next turn's start: one record write for both", async () => {
    const counting = countingRecordWrites(await openStore());
    const h = await makeHarness({
      store: counting.store,
      steps: [{ ...textStep("one"), usage: USAGE }, textStep("two")],
    });
    await turnDone(h, "first");
    expect((await stored(h.store))?.pendingTurn).toBeDefined();
    const before = counting.writes();
    expect((await h.manager.receive(message("second"))).status).toBe("started");
    expect(counting.writes() - before).toBe(1);
    const record = await stored(h.store);
    expect(record?.turns).toBe(2);
    expect(record?.usage).toEqual(USAGE);
    expect(record?.pendingTurn?.request).toBeDefined();
    await h.manager.idle();
    expect((await stored(h.store))?.pendingTurn).toBeUndefined();
  });

  it("is saved on its own when no message follows", async () => {
    const h = await makeHarness({ steps: [{ ...textStep("one"), usage: USAGE }] });
    await turnDone(h, "first");
    await eventually(async () => (await stored(h.store))?.pendingTurn === undefined, "the end saved", 3_000);
    expect((await stored(h.store))?.usage).toEqual(USAGE);
  });

  it("is saved by drain", async () => {
    const h = await makeHarness({ steps: [textStep("one")] });
    await turnDone(h, "first");
    await h.manager.drain(1_000);
    expect((await stored(h.store))?.pendingTurn).toBeUndefined();
  });

  it("while unsaved, a redelivery is a duplicate — also after a crash, which finds the turn done", async () => {
    const dataDir = (await makeHarness()).dataDir;
    const store = await openStore(dataDir);
    const h = await makeHarness({ store, dataDir, steps: [textStep("one")] });
    await turnDone(h, "first", ["ev-first"]);
    expect((await h.manager.receive(message("first", { keys: ["ev-first"] }))).status).toBe("duplicate");
    expect((await stored(store))?.pendingTurn).toBeDefined();

    // The process dies here (no drain): a new one starts on the same store.
    const after = await makeHarness({ store, dataDir });
    await after.manager.start();
    expect((await after.manager.receive(message("first", { keys: ["ev-first"] }))).status).toBe("duplicate");
    await after.manager.idle();
    expect(after.provider.requests).toHaveLength(0);
    expect(after.outputs.for(thread()).turns).toHaveLength(0);
    expect((await stored(store))?.pendingTurn).toBeUndefined();
    expect(h.outputs.for(thread()).closedTurns).toHaveLength(1);
  });

  it("after a crash that found it left out of the index, the session's next message finds the turn done", async () => {
    const dataDir = (await makeHarness()).dataDir;
    const store = await openStore(dataDir);
    const h = await makeHarness({
      store,
      dataDir,
      steps: [textStep("one"), textStep("other")],
    });
    await turnDone(h, "first", ["ev-first"]);
    // Another thread's turn: the index written when it starts no longer lists the first session.
    const elsewhere = thread("1700000000.000200");
    await h.manager.receive(message("elsewhere", { target: elsewhere }));
    await h.outputs.until(
      () => h.outputs.for(elsewhere).closedTurns.length === 1,
      "the other thread's reply",
    );
    const first = (await stored(store))!;
    expect(first.pendingTurn).toBeDefined();
    expect(await store.space("sessions").get<string[]>("active")).not.toContain(first.id);

    const after = await makeHarness({ store, dataDir, steps: [textStep("two")] });
    await after.manager.start();
    expect((await after.manager.receive(message("first", { keys: ["ev-first"] }))).status).toBe("duplicate");
    // It waits behind the turn the store still shows, which is then found done.
    expect((await after.manager.receive(message("second"))).status).toBe("queued");
    await after.manager.idle();
    expect(after.outputs.for(thread()).closedTurns.map((turn) => RecordingOutput.textOf(turn))).toEqual([
      "two",
    ]);
    const sent = after.provider.requests[0]!.messages.map((m) => m.content);
    expect(sent.filter((content) => content === "first")).toHaveLength(1);
    expect(sent.at(-1)).toBe("second");
    expect((await stored(store))?.turns).toBe(2);
  });

  it("is saved when its session leaves memory, and the session reloads with it", async () => {
    const h = await makeHarness({
      steps: [{ ...textStep("one"), usage: USAGE }, textStep("other"), textStep("two")],
      overrides: { maxSessionsInMemory: 1 },
    });
    const id = await turnDone(h, "first");
    expect((await stored(h.store))?.pendingTurn).toBeDefined();
    // A message in another thread takes the one place in memory: the first session is evicted.
    const elsewhere = thread("1700000000.000200");
    await h.manager.receive(message("elsewhere", { target: elsewhere }));
    await h.outputs.until(
      () => h.outputs.for(elsewhere).closedTurns.length === 1,
      "the other thread's reply",
    );
    await eventually(() => h.manager.sessionsInMemory === 1, "the first session's eviction");
    const saved = await new SessionRecords(h.store.space("sessions")).get(id);
    expect(saved?.pendingTurn).toBeUndefined();
    expect(saved?.usage).toEqual(USAGE);
    // Back in the first thread: the reloaded session has no turn in progress, so the message starts at once.
    expect((await h.manager.receive(message("second"))).status).toBe("started");
    await h.manager.idle();
    expect((await stored(h.store))?.turns).toBe(2);
  });
});
