/**
 * updateByCompareAndSet on the in-memory store: the write lands only over the value read, a write
 * lost to another process's starts again from theirs, it gives up after the attempts allowed, and
 * it says which of the three happened. On a SQLite file holding rows another program wrote: a row
 * in other text than the store writes is updated (it was compared as the value read, and never
 * matched: every attempt lost), and a row holding no readable value is handed to a change that
 * asks for it, and replaced.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createStore } from "../../src/store/create-store.js";
import type { KeyValueSpace, Store } from "../../src/store/store.js";
import { UnreadableRow } from "../../src/store/stored-row.js";
import { updateByCompareAndSet } from "../../src/store/update-by-compare-and-set.js";

type Counter = { readonly n: number };
const plusOne = (current: unknown) => ({ n: ((current as Counter | undefined)?.n ?? 0) + 1 });

describe("updateByCompareAndSet", () => {
  let store: Store;
  let space: KeyValueSpace;
  const calls = { get: 0, replaceIf: 0, setIfAbsent: 0 };
  /** Run by the space before each compare-and-set or write-if-absent reaches the store: another process's write. */
  let otherWriter: (() => Promise<void>) | undefined;

  beforeEach(async () => {
    store = await createStore({ url: "memory:", dataDir: os.tmpdir() });
    const inner = store.space("schedules");
    calls.get = calls.replaceIf = calls.setIfAbsent = 0;
    otherWriter = undefined;
    space = {
      ...inner,
      get: (key) => {
        calls.get += 1;
        return inner.get(key);
      },
      set: (key, value, ttlMs) => inner.set(key, value, ttlMs),
      delete: (key) => inner.delete(key),
      setIfAbsent: async (key, value, ttlMs) => {
        calls.setIfAbsent += 1;
        await otherWriter?.();
        return inner.setIfAbsent(key, value, ttlMs);
      },
      replaceIf: async (key, expected, value, ttlMs) => {
        calls.replaceIf += 1;
        await otherWriter?.();
        return inner.replaceIf(key, expected, value, ttlMs);
      },
      deleteIf: (key, expected) => inner.deleteIf(key, expected),
    };
  });
  afterEach(async () => {
    vi.useRealTimers();
    await store.close();
  });

  it("writes the change over the value read and says what it replaced", async () => {
    await space.set("count", { n: 1 });
    expect(await updateByCompareAndSet(space, "count", plusOne, { attempts: 3 })).toEqual({
      outcome: "updated",
      value: { n: 2 },
      replaced: { n: 1 },
    });
    expect(await space.get("count")).toEqual({ n: 2 });
    expect(calls).toEqual({ get: 2, replaceIf: 1, setIfAbsent: 0 });
  });

  it("starts again from the other process's value when it wrote first, and then lands", async () => {
    await space.set("count", { n: 1 });
    let theirs = true;
    otherWriter = async () => {
      if (theirs) await store.space("schedules").set("count", { n: 10 });
      theirs = false;
    };
    const seen: unknown[] = [];
    const result = await updateByCompareAndSet(
      space,
      "count",
      (current) => {
        seen.push(current);
        return plusOne(current);
      },
      { attempts: 3 },
    );
    expect(result).toEqual({ outcome: "updated", value: { n: 11 }, replaced: { n: 10 } });
    expect(seen).toEqual([{ n: 1 }, { n: 10 }]);
    expect(await space.get("count")).toEqual({ n: 11 });
    expect(calls.replaceIf).toBe(2);
  });

  it("gives up after the attempts allowed, every one lost, leaving the other process's value", async () => {
    await space.set("count", { n: 1 });
    let theirs = 100;
    otherWriter = async () => {
      theirs += 1;
      await store.space("schedules").set("count", { n: theirs });
    };
    expect(await updateByCompareAndSet(space, "count", plusOne, { attempts: 4 })).toEqual({
      outcome: "gave-up",
      attempts: 4,
    });
    expect(calls.replaceIf).toBe(4);
    expect(await space.get("count")).toEqual({ n: 104 });
  });

  it("writes nothing when the change asks for no write, and hands back what it saw", async () => {
    await space.set("count", { n: 7 });
    expect(await updateByCompareAndSet(space, "count", () => undefined, { attempts: 3 })).toEqual({
      outcome: "unchanged",
      current: { n: 7 },
    });
    expect(await updateByCompareAndSet(space, "absent", () => undefined, { attempts: 3 })).toEqual({
      outcome: "unchanged",
      current: undefined,
    });
    expect(calls).toEqual({ get: 2, replaceIf: 0, setIfAbsent: 0 });
    expect(await space.get("count")).toEqual({ n: 7 });
    expect(await space.get("absent")).toBeUndefined();
  });

  it("creates an absent key only if still absent: one another process created meanwhile is changed from theirs", async () => {
    let theirs = true;
    otherWriter = async () => {
      if (theirs) await store.space("schedules").set("count", { n: 20 });
      theirs = false;
    };
    expect(await updateByCompareAndSet(space, "count", plusOne, { attempts: 2 })).toEqual({
      outcome: "updated",
      value: { n: 21 },
      replaced: { n: 20 },
    });
    expect(calls).toMatchObject({ setIfAbsent: 1, replaceIf: 1 });
  });

  it("gives the value written its TTL, over an entry written with one", async () => {
    await space.set("count", { n: 1 }, 60_000);
    expect(
      await updateByCompareAndSet(space, "count", plusOne, { attempts: 1, ttlMs: 3_600_000 }),
    ).toMatchObject({
      outcome: "updated",
    });
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 120_000 });
    expect(await space.get("count")).toEqual({ n: 2 });
    vi.setSystemTime(Date.now() + 3_600_000);
    expect(await space.get("count")).toBeUndefined();
  });

  it("works from a value believed stored without reading, and reads once a write over it lost", async () => {
    await space.set("count", { n: 1 });
    expect(
      await updateByCompareAndSet(space, "count", plusOne, { attempts: 3, believed: { value: { n: 1 } } }),
    ).toMatchObject({ outcome: "updated", value: { n: 2 } });
    expect(calls.get).toBe(0);
    expect(
      await updateByCompareAndSet(space, "count", plusOne, { attempts: 3, believed: { value: undefined } }),
    ).toMatchObject({ outcome: "updated", value: { n: 3 }, replaced: { n: 2 } });
    expect(calls).toEqual({ get: 1, replaceIf: 2, setIfAbsent: 1 });
  });

  it("refuses fewer than one attempt", async () => {
    await expect(updateByCompareAndSet(space, "count", plusOne, { attempts: 0 })).rejects.toThrow(
      "updating count by compare-and-set needs at least one attempt (got 0)",
    );
  });
});

describe("updateByCompareAndSet over rows another program wrote", () => {
  let dir: string;
  let store: Store;
  /** Store `text` as the row of `key` in "schedules", as another program would. */
  const writeRow = (key: string, text: string) => {
    const db = new Database(path.join(dir, "coworker.sqlite"));
    db.prepare("INSERT INTO keyv (key, value) VALUES (?, ?)").run(`schedules:${key}`, text);
    db.close();
  };

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "cas-rows-"));
    store = await createStore({ dataDir: dir });
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("updates a row in other text than the store writes over that very row", async () => {
    writeRow("spaced", '{"value": {"n": 1}}');
    writeRow("null-expiry", '{"value":{"n":1},"expires":null}');
    const space = store.space("schedules");
    for (const key of ["spaced", "null-expiry"]) {
      expect(await updateByCompareAndSet(space, key, plusOne, { attempts: 2 })).toEqual({
        outcome: "updated",
        value: { n: 2 },
        replaced: { n: 1 },
      });
      expect(await space.get(key)).toEqual({ n: 2 });
    }
  });

  it("rejects with the UnreadableRow of a row holding no readable value, unless asked to hand it to the change, which may replace it", async () => {
    writeRow("mangled", "not json {");
    writeRow("empty", "null");
    const space = store.space("schedules");
    const change = vi.fn(() => ({ n: 1 }));
    await expect(updateByCompareAndSet(space, "mangled", change, { attempts: 2 })).rejects.toBeInstanceOf(
      UnreadableRow,
    );
    expect(change).not.toHaveBeenCalled();
    for (const key of ["mangled", "empty"]) {
      const updated = await updateByCompareAndSet(space, key, change, { attempts: 2, readsUnreadable: true });
      expect(updated).toMatchObject({ outcome: "updated", value: { n: 1 }, replaced: { key } });
      expect((updated as { replaced: unknown }).replaced).toBeInstanceOf(UnreadableRow);
      expect(await space.get(key)).toEqual({ n: 1 });
    }
    writeRow("kept", "[]");
    expect(
      await updateByCompareAndSet(space, "kept", () => undefined, { attempts: 1, readsUnreadable: true }),
    ).toMatchObject({ outcome: "unchanged", current: { key: "kept", row: { text: "[]" } } });
  });
});
