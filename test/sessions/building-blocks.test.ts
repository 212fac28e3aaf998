import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LruCache } from "../../src/core/lru-cache.js";
import { attachmentsOf, buildTurnRequest, surfaceOf } from "../../src/sessions/request-builder.js";
import { InProcessSessionLock, withSessionLock } from "../../src/sessions/session-lock.js";
import { hasPendingWork } from "../../src/sessions/session-record.js";
import { SessionRecords } from "../../src/sessions/session-records.js";
import { isAnotherBotsCommand, parseCommand, parseTextCommand } from "../../src/core/text-commands.js";
import { StoredDataError } from "../../src/store/versioned.js";
import { openStore, sessionRecord, thread } from "./helpers/harness.js";

describe("text commands", () => {
  it("recognises complete commands typed as messages, not sentences that start with a command word", () => {
    expect(parseTextCommand("stop")).toEqual({ ok: true, command: { name: "stop" } });
    expect(parseTextCommand("  Mode AUTO ")).toEqual({ ok: true, command: { name: "mode", mode: "auto" } });
    expect(parseTextCommand("/mode reviewed")).toEqual({
      ok: true,
      command: { name: "mode", mode: "reviewed" },
    });
    expect(parseTextCommand("/reviewer")).toEqual({ ok: true, command: { name: "reviewer" } });
    expect(parseCommand("reviewer", ["x"])).toEqual({ ok: false, error: '"reviewer" takes no arguments.' });
    expect(parseTextCommand("/new@CoworkerBot")).toEqual({ ok: true, command: { name: "new" } });
    expect(parseTextCommand("grants revoke 2")).toEqual({
      ok: true,
      command: { name: "grants-revoke", index: 2 },
    });
    expect(parseTextCommand("approve AbCdEfGhIjKlMnOpQrSt")).toEqual({
      ok: true,
      command: { name: "approve", id: "AbCdEfGhIjKlMnOpQrSt" },
    });
    expect(parseTextCommand("stop doing that and use tabs")).toBeUndefined();
    expect(parseTextCommand("status of the deploy?")).toBeUndefined();
    expect(parseTextCommand("/etc/hosts is broken")).toBeUndefined();
    expect(parseTextCommand("/start")).toBeUndefined();
    expect(parseTextCommand("")).toBeUndefined();
    expect(parseTextCommand("/mode banana")).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^Usage: mode/),
    });
  });

  it("with the bot's own name, a command addressed to another bot is not a command", () => {
    const status = { ok: true, command: { name: "status" } };
    // Its own name, in any case, and no name at all still parse.
    expect(parseTextCommand("/status@CoworkerBot", "CoworkerBot")).toEqual(status);
    expect(parseTextCommand("/status@coworkerbot", "CoworkerBot")).toEqual(status);
    expect(parseTextCommand("/STATUS@COWORKERBOT", "coworkerbot")).toEqual(status);
    expect(parseTextCommand("/status", "CoworkerBot")).toEqual(status);
    expect(parseTextCommand("status", "CoworkerBot")).toEqual(status);
    expect(parseTextCommand("/mode@CoworkerBot banana", "CoworkerBot")).toMatchObject({ ok: false });
    // Another name: not ours, not even its usage text.
    expect(parseTextCommand("/status@OtherBot", "CoworkerBot")).toBeUndefined();
    expect(parseTextCommand("  /new@Other_Bot", "CoworkerBot")).toBeUndefined();
    expect(parseTextCommand("/mode@OtherBot auto", "CoworkerBot")).toBeUndefined();
    expect(parseTextCommand("/mode@OtherBot banana", "CoworkerBot")).toBeUndefined();
    expect(parseTextCommand("/help@OtherBot", "CoworkerBot")).toBeUndefined();
    // A name that only starts like ours is another one.
    expect(parseTextCommand("/new@CoworkerBot2", "CoworkerBot")).toBeUndefined();
    expect(isAnotherBotsCommand("/start@OtherBot", "CoworkerBot")).toBe(true);
    expect(isAnotherBotsCommand("/start@coworkerBOT hi", "CoworkerBot")).toBe(false);
    expect(isAnotherBotsCommand("/start hi", "CoworkerBot")).toBe(false);
    expect(isAnotherBotsCommand("ask @OtherBot /new@OtherBot", "CoworkerBot")).toBe(false);
    // Without a name (Slack, the console) the addressee is dropped, as before.
    expect(parseTextCommand("/status@OtherBot")).toEqual(status);
    expect(parseTextCommand("/new@AnyBot", undefined)).toEqual({ ok: true, command: { name: "new" } });
    expect(isAnotherBotsCommand("/new@OtherBot", undefined)).toBe(false);
  });

  it("explains bad explicit commands", () => {
    expect(parseCommand("grants", ["revoke", "0"])).toMatchObject({ ok: false });
    expect(parseCommand("model", ["a b"])).toMatchObject({ ok: false });
    expect(parseCommand("deny", [])).toEqual({ ok: false, error: "Usage: deny <id>" });
    expect(parseCommand("status", ["now"])).toEqual({ ok: false, error: '"status" takes no arguments.' });
    expect(parseCommand("/model", ["openai/gpt-4.1"])).toEqual({
      ok: true,
      command: { name: "model", model: "openai/gpt-4.1" },
    });
  });
});

describe("LruCache", () => {
  it("evicts the least recently used unpinned entries", () => {
    const evicted: string[] = [];
    const pinned = new Set(["a"]);
    const lru = new LruCache<string, string>(
      2,
      (v) => pinned.has(v),
      (k) => evicted.push(k),
    );
    lru.set("a", "a");
    lru.set("b", "b");
    lru.get("b");
    lru.set("c", "c");
    expect(evicted).toEqual(["b"]);
    expect([...lru.values()]).toEqual(["a", "c"]);
    pinned.delete("a");
    lru.set("d", "d");
    expect(evicted).toEqual(["b", "a"]);
    expect(() => new LruCache(0)).toThrow(RangeError);
  });
});

describe("InProcessSessionLock", () => {
  it("runs holders of one key one at a time, in arrival order; other keys run alongside", async () => {
    const lock = new InProcessSessionLock();
    const order: string[] = [];
    let releaseFirst!: () => void;
    const first = withSessionLock(lock, "s1", async () => {
      order.push("first:start");
      await new Promise<void>((resolve) => {
        releaseFirst = resolve;
      });
      order.push("first:end");
    });
    const second = withSessionLock(lock, "s1", async () => {
      order.push("second");
    });
    await withSessionLock(lock, "s2", async () => {
      order.push("other key");
    });
    expect(lock.isHeld("s1")).toBe(true);
    releaseFirst();
    await Promise.all([first, second]);
    expect(order).toEqual(["first:start", "other key", "first:end", "second"]);
    expect(lock.isHeld("s1")).toBe(false);
  });
});

describe("session records", () => {
  it("reads the v1 fixture and refuses a newer version", async () => {
    const store = await openStore();
    const raw = JSON.parse(
      readFileSync(join(import.meta.dirname, "fixtures", "session-record.v1.json"), "utf8"),
    );
    const space = store.space("sessions");
    await space.set("rec:fixture", raw);
    const records = new SessionRecords(space);
    const record = await records.get("fixture");
    expect(record).toMatchObject({
      mode: "interactive",
      turns: 3,
      grants: [{ kind: "tool", tool: "write_file" }, { kind: "readonly_session" }],
    });
    expect(hasPendingWork(record!)).toBe(true);
    await space.set("rec:newer", { ...raw, v: 9 });
    await expect(records.get("newer")).rejects.toThrow(StoredDataError);
  });

  it("keeps the active index in step with pending work", async () => {
    const store = await openStore();
    const records = new SessionRecords(store.space("sessions"));
    const base = sessionRecord("s1", { key: "k", target: thread(), mode: "auto", now: new Date() });
    await records.put(base);
    expect(await records.activeIds()).toEqual([]);
    const queued = { ...base, queue: [{ user: { id: "U", name: "U" }, text: "x", files: [], sentAt: "t" }] };
    await records.put(queued);
    expect(await records.activeIds()).toEqual(["s1"]);
    await records.put(base);
    expect(await records.activeIds()).toEqual([]);
  });
});

describe("request builder", () => {
  it("builds a frozen snapshot with the target in metadata and files named in the prompt", () => {
    const record = sessionRecord("s1", {
      key: "k",
      target: { ...thread(), extra: { surface: "dm" } },
      mode: "plan",
      provider: "openai",
      model: "gpt",
      now: new Date(),
    });
    const message = {
      user: { id: "U1", name: "Ana" },
      text: "look",
      files: [{ path: "uploads/a.txt", name: "a.txt", bytes: 3 }],
      sentAt: "2026-01-01T00:00:00.000Z",
    };
    const request = buildTurnRequest({
      record,
      message,
      history: [],
      settings: { workspace: { root: "/w", context: "ctx" }, maxSteps: 7 },
      turnId: "t1",
    });
    expect(request).toMatchObject({
      // The person's words alone: the file is listed beside them (its name is its sender's choice).
      prompt: "look",
      attachments: [{ kind: "saved-file", path: "uploads/a.txt", name: "a.txt", bytes: 3 }],
      sessionId: "s1",
      surface: "dm",
      mode: "plan",
      maxSteps: 7,
      requester: { userId: "U1", displayName: "Ana" },
      metadata: { target: record.target, sentAt: message.sentAt },
    });
    expect(Object.isFrozen(request.metadata)).toBe(true);
    expect(attachmentsOf({ files: [] })).toEqual([]);
    expect(surfaceOf({ platform: "telegram", workspace: "tg", channel: "1" })).toBe("channel");
  });
});
