/**
 * An expiry the store fails part-way — the decision written, the item's record not — is tried
 * again: its timer has fired and no other process expires the item, and a later expiry or press
 * found it decided and did nothing more, so the card stayed open and the turn parked until a
 * restart. The retry finishes the settlement and resumes the parked turn.
 */
import pino from "pino";
import { afterEach, expect, it, vi } from "vitest";
import { parkTurn } from "../../src/approvals/parked-turn.js";
import { PendingHub } from "../../src/approvals/pending-hub.js";
import type { AskContext, ExpirySchedule } from "../../src/approvals/pending-hub-types.js";
import type { PendingApproval } from "../../src/approvals/pending-item.js";
import { PendingStore } from "../../src/approvals/pending-store.js";
import type { ConversationMessage } from "../../src/core/messages.js";
import { ParkedTurns } from "../../src/sessions/parked-turns.js";
import type { SessionCache } from "../../src/sessions/session-cache.js";
import type { TurnScheduler } from "../../src/sessions/turn-scheduler.js";
import { createStore } from "../../src/store/create-store.js";
import type { KeyValueSpace, Store } from "../../src/store/store.js";
import { StoredDataError } from "../../src/store/versioned.js";
import { RecordingOutputs } from "../support/recording-output.js";
import { tempDir } from "./helpers/harness.js";

const target = { platform: "slack", workspace: "T1", channel: "C1", thread: "1.1" };
const ana = { platform: "slack", userId: "U_ANA", name: "Ana" };
const history: ConversationMessage[] = [
  { role: "user", content: "write" },
  {
    role: "assistant",
    content: null,
    tool_calls: [
      { id: "c1", type: "function", function: { name: "write_note", arguments: '{"text":"hi"}' } },
    ],
  },
];
const marker = {
  turnId: "t1",
  request: { prompt: "write", messages: [] },
  startedAt: new Date().toISOString(),
};

const noTimers: ExpirySchedule = { arm: () => undefined, clear: () => undefined, clearAll: () => undefined };

/** `store` whose next write of a pending item's record fails, once `failing.next` is set. */
function failingItemWrites(store: Store, failing: { next: boolean }): Store {
  const space = (name: Parameters<Store["space"]>[0]): KeyValueSpace => {
    const inner = store.space(name);
    return {
      ...inner,
      get: (key) => inner.get(key),
      setIfAbsent: (key, value, ttlMs) => inner.setIfAbsent(key, value, ttlMs),
      set: async (key, value, ttlMs) => {
        if (failing.next && key.startsWith("item:")) {
          failing.next = false;
          throw new Error("store down");
        }
        return inner.set(key, value, ttlMs);
      },
    };
  };
  return Object.assign(Object.create(store) as Store, { space });
}

afterEach(() => {
  vi.useRealTimers();
});

it("an expiry the store failed part-way is tried again, and the parked turn resumes", async () => {
  const store = await createStore({ url: "memory:", dataDir: tempDir() });
  const outputs = new RecordingOutputs();
  const hubOn = (s: Store) =>
    new PendingHub({
      store: new PendingStore(s),
      outputFor: outputs.factory,
      deliveries: { record: async () => undefined },
      timers: noTimers,
      config: { approvers: [], perChannel: {}, ttlMs: 60_000 },
      logger: pino({ level: "silent" }),
      now: () => new Date(),
    });
  // The item is raised by a turn of another process (or before a restart): none waits here.
  const asker = hubOn(store);
  const parked = parkTurn("s1", marker, history);
  const context: AskContext = { sessionId: "s1", target, requester: ana, parked };
  const build = (argsHash: string): PendingApproval => ({
    ...asker.base(context, "c1", argsHash),
    kind: "approval",
    tool: "write_note",
    argSummary: "write_note hi",
    reason: "writes",
    alwaysOptions: [],
  });
  void asker.obtain(
    "approval",
    context,
    "c1",
    { tool: "write_note", args: { text: "hi" } },
    build,
    new AbortController().signal,
  );
  const out = outputs.for(target);
  const card = await outputs.until(() => out.latestCards.find((c) => c.buttons.length > 0), "card");

  const failing = { next: false };
  const resumed: string[] = [];
  const turns = new ParkedTurns({
    hub: hubOn(failingItemWrites(store, failing)),
    cache: {} as SessionCache,
    scheduler: {} as TurnScheduler,
    logger: pino({ level: "silent" }),
    resumeShared: async (sessionId) => void resumed.push(sessionId),
  });
  vi.useFakeTimers();
  failing.next = true;
  await turns.expire(card.pendingId);
  expect(resumed).toEqual([]);
  await vi.advanceTimersByTimeAsync(30_000);
  await vi.waitFor(() => expect(resumed).toEqual(["s1"]));
  const item = await new PendingStore(store).get(card.pendingId);
  expect(item?.status).toBe("expired");
  expect(await new PendingStore(store).openItems("s1")).toEqual([]);
  await store.close();
});

it("an expiry of an item whose record cannot be read is not tried again", async () => {
  const calls: string[] = [];
  const unreadable = async (id: string): Promise<never> => {
    calls.push(id);
    throw new StoredDataError("pending item: schema version 999 is newer than this build");
  };
  const turns = new ParkedTurns({
    hub: { expire: unreadable, expireAgain: unreadable } as unknown as PendingHub,
    cache: {} as SessionCache,
    scheduler: {} as TurnScheduler,
    logger: pino({ level: "silent" }),
    resumeShared: async () => undefined,
  });
  vi.useFakeTimers();
  await turns.expire("p1");
  await vi.advanceTimersByTimeAsync(120_000);
  expect(calls).toEqual(["p1"]);
});

it("a failed expiry waiting to be tried again is dropped at shutdown", async () => {
  const calls: string[] = [];
  const down = async (id: string): Promise<never> => {
    calls.push(id);
    throw new Error("store down");
  };
  const turns = new ParkedTurns({
    hub: { expire: down, expireAgain: down } as unknown as PendingHub,
    cache: {} as SessionCache,
    scheduler: {} as TurnScheduler,
    logger: pino({ level: "silent" }),
    resumeShared: async () => undefined,
  });
  vi.useFakeTimers();
  await turns.expire("p1");
  turns.stopRetries();
  await vi.advanceTimersByTimeAsync(120_000);
  expect(calls).toEqual(["p1"]);
  expect(vi.getTimerCount()).toBe(0);
});
