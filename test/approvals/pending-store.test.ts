import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { decodePending, encodePending } from "../../src/approvals/pending-codec.js";
import {
  callHash,
  canonicalJson,
  newPendingId,
  type PendingApproval,
  type PendingQuestion,
} from "../../src/approvals/pending-item.js";
import { PendingStore } from "../../src/approvals/pending-store.js";
import { InProcessCoordination } from "../../src/store/coordination/in-process-coordination.js";
import { createStore } from "../../src/store/create-store.js";
import type { KeyValueSpace, Store } from "../../src/store/store.js";
import { StoredDataError } from "../../src/store/versioned.js";
import { tempDir } from "../sessions/helpers/harness.js";

const fixture = (name: string): unknown =>
  JSON.parse(readFileSync(join(import.meta.dirname, "fixtures", name), "utf8"));

const NOW = new Date("2026-01-02T03:04:05.000Z");
const ana = { platform: "slack", userId: "U_ANA", name: "Ana" };
const boss = { platform: "slack", userId: "U_BOSS", name: "Boss" };

function approval(overrides: Partial<PendingApproval> = {}): PendingApproval {
  return {
    id: newPendingId(),
    sessionId: "s1",
    target: { platform: "slack", workspace: "T1", channel: "C1", thread: "1.1" },
    callId: "c1",
    argsHash: callHash("write_note", { text: "hi" }),
    requester: ana,
    allowedApprovers: ["slack:U_ANA"],
    createdAt: NOW.toISOString(),
    expiresAt: new Date(NOW.getTime() + 60_000).toISOString(),
    status: "pending",
    kind: "approval",
    tool: "write_note",
    argSummary: "write_note hi",
    reason: "needs approval",
    alwaysOptions: ["always_tool"],
    ...overrides,
  };
}

describe("pending items", () => {
  it("ids are 20 unguessable base64url characters", () => {
    const ids = new Set(Array.from({ length: 200 }, newPendingId));
    expect(ids.size).toBe(200);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{20}$/);
  });

  it("hashes the tool name with canonical JSON arguments (key order does not matter)", () => {
    expect(canonicalJson({ b: [1, { d: 1, c: 2 }], a: "x" })).toBe('{"a":"x","b":[1,{"c":2,"d":1}]}');
    expect(callHash("t", { a: 1, b: 2 })).toBe(callHash("t", { b: 2, a: 1 }));
    expect(callHash("t", { a: 1 })).not.toBe(callHash("u", { a: 1 }));
    expect(callHash("t", { a: 1 })).not.toBe(callHash("t", { a: 2 }));
  });

  it("reads the v1 fixtures of both spaces' stored shapes", () => {
    const stored = decodePending(fixture("pending-approval.v1.json"));
    expect(stored).toMatchObject({ kind: "approval", status: "decided", decision: { action: "once" } });
    expect(decodePending(fixture("pending-question.v1.json"))).toMatchObject({
      kind: "question",
      answers: { q1: "M" },
    });
    expect(decodePending(encodePending(stored))).toEqual(stored);
  });

  it("fails loudly on a newer schema version or a corrupt record", () => {
    const newer = { ...(fixture("pending-approval.v1.json") as object), v: 2 };
    expect(() => decodePending(newer)).toThrow(StoredDataError);
    expect(() => decodePending(newer)).toThrow(/newer Coworker \(schema v2\)/);
    const corrupt = fixture("pending-approval.v1.json") as { data: Record<string, unknown> };
    expect(() => decodePending({ ...corrupt, data: { ...corrupt.data, status: "maybe" } })).toThrow(/status/);
  });
});

describe("PendingStore", () => {
  let store: Store;
  let pending: PendingStore;
  beforeEach(async () => {
    store = await createStore({ url: "memory:", dataDir: tempDir() });
    pending = new PendingStore(store, () => NOW);
  });

  it("creates, indexes by call and lists open items", async () => {
    const item = approval();
    await pending.create(item);
    expect(await pending.get(item.id)).toEqual(item);
    expect(await pending.forCall("approval", "s1", "c1")).toEqual(item);
    expect(await pending.forCall("question", "s1", "c1")).toBeUndefined();
    expect(await pending.openItems()).toEqual([
      { id: item.id, kind: "approval", sessionId: "s1", expiresAt: item.expiresAt },
    ]);
  });

  it("first decision wins among concurrent ones, and the item leaves the open index", async () => {
    const item = approval();
    await pending.create(item);
    const decisions = ["once", "deny", "always_tool", "deny"].map((action, i) =>
      pending.settle(item.id, { action, by: i % 2 ? boss : ana, at: NOW.toISOString() }),
    );
    const results = await Promise.all(decisions);
    expect(results.filter((r) => r.won)).toHaveLength(1);
    const winner = results.find((r) => r.won)!;
    const stored = await pending.get(item.id);
    expect(stored?.status).toBe("decided");
    expect(stored?.decision).toEqual(winner.item?.decision);
    expect(await pending.openItems()).toEqual([]);
  });

  it("a decision key written before a crash wins over the stale record", async () => {
    const item = approval();
    await pending.create(item);
    const decision = { action: "deny", by: boss, at: NOW.toISOString() };
    await store.space("approvals").set(`decision:${item.id}`, decision);
    expect(await pending.get(item.id)).toMatchObject({ status: "decided", decision });
    expect((await pending.settle(item.id, { action: "once", by: ana, at: NOW.toISOString() })).won).toBe(
      false,
    );
  });

  it("records each question's first answer only, in the questions space", async () => {
    const question: PendingQuestion = {
      ...approval(),
      kind: "question",
      questions: [
        { id: "q1", question: "A?", options: ["x", "y"] },
        { id: "q2", question: "B?", options: [] },
      ],
      answers: {},
    } as unknown as PendingQuestion;
    await pending.create(question);
    expect(await store.space("questions").get(`item:${question.id}`)).toBeDefined();
    expect((await pending.recordAnswer(question.id, "q1", "x", ana)).won).toBe(true);
    const second = await pending.recordAnswer(question.id, "q1", "y", boss);
    expect(second.won).toBe(false);
    expect(second.item).toMatchObject({ answers: { q1: "x" }, status: "pending" });
  });

  it("keeps a typed answer's files with it, also when a crash came before the record was updated", async () => {
    const question = {
      ...approval(),
      kind: "question",
      questions: [
        { id: "q1", question: "Screenshot?", options: [] },
        { id: "q2", question: "Log?", options: [] },
      ],
      answers: {},
    } as unknown as PendingQuestion;
    await pending.create(question);
    const shot = { kind: "saved-file" as const, path: "uploads/a.png", name: "a.png", bytes: 3 };
    const typed = { dedupeKeys: ["k1"], onWin: async () => {}, files: [shot] };
    expect((await pending.recordAnswer(question.id, "q1", "here", ana, typed)).won).toBe(true);
    expect(await pending.get(question.id)).toMatchObject({
      answers: { q1: "here" },
      answerFiles: { q1: [shot] },
    });
    // A process that wrote q2's answer key and died before updating the record: read back whole.
    const log = { kind: "file-note" as const, text: "log.txt was not saved" };
    const at = NOW.toISOString();
    await store.space("questions").set(`answer:${question.id}:q2`, { answer: "", by: ana, at, files: [log] });
    expect(await pending.get(question.id)).toMatchObject({
      answers: { q1: "here", q2: "" },
      answerFiles: { q1: [shot], q2: [log] },
    });
  });

  it("settling as expired or cancelled sets that status", async () => {
    const a = approval();
    const b = approval({ callId: "c2" });
    await pending.create(a);
    await pending.create(b);
    await pending.settle(a.id, { action: "expired", at: NOW.toISOString() });
    await pending.settle(b.id, { action: "cancelled", note: "stopped", at: NOW.toISOString() });
    expect((await pending.get(a.id))?.status).toBe("expired");
    expect((await pending.get(b.id))?.status).toBe("cancelled");
  });
});

/** A store whose "approvals" space counts reads of the open index and can refuse its next write. */
function watchedStore(inner: Store) {
  const watch = { openReads: 0, failNextOpenWrite: false };
  const wrap = (space: KeyValueSpace): KeyValueSpace => ({
    get: (key) => {
      if (key === "open") watch.openReads++;
      return space.get(key);
    },
    set: async (key, value, ttl) => {
      if (key === "open" && watch.failNextOpenWrite) {
        watch.failNextOpenWrite = false;
        throw new Error("disk full");
      }
      return space.set(key, value, ttl);
    },
    delete: (key) => space.delete(key),
    setIfAbsent: (key, value, ttl) => space.setIfAbsent(key, value, ttl),
    replaceIf: (key, expected, value, ttlMs) => space.replaceIf(key, expected, value, ttlMs),
    deleteIf: (key, expected) => space.deleteIf(key, expected),
  });
  const store: Store = {
    description: inner.description,
    writesInOrder: inner.writesInOrder,
    space: (namespace) => (namespace === "approvals" ? wrap(inner.space(namespace)) : inner.space(namespace)),
    ping: () => inner.ping(),
    close: () => inner.close(),
  };
  return { store, watch };
}

describe("PendingStore open-items index in memory", () => {
  let base: Store;
  beforeEach(async () => {
    base = await createStore({ url: "memory:", dataDir: tempDir() });
  });

  it("reads the stored index once, then answers from memory, per session too", async () => {
    const { store, watch } = watchedStore(base);
    const pending = new PendingStore(store, () => NOW);
    const first = approval();
    const second = approval({ sessionId: "s2", callId: "c2" });
    await pending.create(first);
    await pending.create(second);
    await pending.settle(first.id, { action: "once", by: ana, at: NOW.toISOString() });
    expect(await pending.openItems()).toEqual([
      { id: second.id, kind: "approval", sessionId: "s2", expiresAt: second.expiresAt },
    ]);
    expect(await pending.openItems("s1")).toEqual([]);
    expect((await pending.openItems("s2")).map((e) => e.id)).toEqual([second.id]);
    expect(watch.openReads).toBe(1);
  });

  it("a new process on the same store starts from the stored index", async () => {
    const before = new PendingStore(base, () => NOW);
    const item = approval();
    await before.create(item);
    await before.openItems();
    const other = approval({ sessionId: "s3", callId: "c9" });
    await before.create(other);
    await before.settle(item.id, { action: "deny", by: boss, at: NOW.toISOString() });
    const after = new PendingStore(base, () => NOW);
    expect((await after.openItems()).map((e) => e.id)).toEqual([other.id]);
  });

  it("after a refused index write, memory follows what the store holds", async () => {
    const { store, watch } = watchedStore(base);
    const pending = new PendingStore(store, () => NOW);
    const kept = approval();
    await pending.create(kept);
    watch.failNextOpenWrite = true;
    await expect(pending.create(approval({ sessionId: "s2", callId: "c2" }))).rejects.toThrow("disk full");
    expect((await pending.openItems()).map((e) => e.id)).toEqual([kept.id]);
    expect(watch.openReads).toBe(2);
  });
});

describe("PendingStore open-items index in a shared map (several processes)", () => {
  it("asks one session's own map about it, the whole index only for sweeps, and drops both on a decision", async () => {
    const store = await createStore({ url: "memory:", dataDir: tempDir() });
    const coordination = new InProcessCoordination(store);
    const reads: string[] = [];
    const shared = {
      setField: coordination.setField.bind(coordination),
      deleteField: coordination.deleteField.bind(coordination),
      fields: async (map: string) => {
        reads.push(map);
        return coordination.fields(map);
      },
    };
    const a = new PendingStore(store, () => NOW, undefined, shared);
    const b = new PendingStore(store, () => NOW, undefined, shared);
    const first = approval();
    const other = approval({ id: "other-item-000000001", sessionId: "s2", callId: "c9" });
    await a.create(first);
    await a.create(other);
    reads.length = 0;
    expect((await b.openItems("s1")).map((e) => e.id)).toEqual([first.id]);
    expect(reads).toEqual(["open-items:s1"]);
    expect((await b.openItems()).map((e) => e.id).sort()).toEqual([first.id, other.id].sort());
    await b.settle(first.id, { action: "deny", by: ana, at: NOW.toISOString() });
    expect(await a.openItems("s1")).toEqual([]);
    expect((await a.openItems()).map((e) => e.id)).toEqual([other.id]);
    expect(await a.dropOpen(first.id)).toBe(false);
  });

  it("gives items indexed before sessions had maps of their own an entry there when the whole index is read", async () => {
    const store = await createStore({ url: "memory:", dataDir: tempDir() });
    const coordination = new InProcessCoordination(store);
    const item = approval();
    const entry = { id: item.id, kind: item.kind, sessionId: item.sessionId, expiresAt: item.expiresAt };
    await coordination.setField("open-items", item.id, JSON.stringify(entry));
    const pending = new PendingStore(store, () => NOW, undefined, coordination);
    expect(await pending.openItems("s1")).toEqual([]);
    expect(await pending.openItems()).toEqual([entry]);
    expect(await pending.openItems("s1")).toEqual([entry]);
  });
});
