/**
 * A wake claim stored in a form that cannot be read — JSON that is not a claim, a row with no
 * value, or a row that is not even JSON (corrupt, or written by something else), and stored
 * without expiry. A take read the first two as held elsewhere, for good: the message's wake-up was
 * looked at again every few minutes and never delivered; the third failed every take. JSON in
 * other text than the store writes (spaced, `"expires":null`) could not be compared, so it too
 * stayed, unreported. A take now replaces each with its own claim, for a take's time, while the
 * row holds exactly what it read (the store's compare-and-set over the row's text), and reports
 * it; a renewal or release still never takes it as its own.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, expect, it } from "vitest";
import { createStore } from "../../src/store/create-store.js";
import type { KeyValueSpace, Store } from "../../src/store/store.js";
import { StoreWakeClaims } from "../../src/subscriptions/wake-claims.js";
import { spaceLike } from "../support/space-like.js";

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** Wake claims in `space`, and what they reported. */
function claimsOn(space: KeyValueSpace): { claims: StoreWakeClaims; reported: string[] } {
  const reported: string[] = [];
  const claims = new StoreWakeClaims(space, (error, context) =>
    reported.push(`${context}: ${(error as Error).message}`),
  );
  return { claims, reported };
}

it("replaces a stored claim that is not a claim, reporting it, and renews and releases it only once it is its own", async () => {
  const store = await createStore({ url: "memory:", dataDir: os.tmpdir() });
  try {
    const space = store.space("dedupe");
    const mine = claimsOn(space);
    const theirs = claimsOn(space);
    await space.set("wake-claim:k1", { owner: 42 });
    expect(await mine.claims.renew("k1")).toBe(false);
    await mine.claims.release("k1");
    expect(await space.get("wake-claim:k1")).toEqual({ owner: 42 });
    expect(mine.reported).toEqual([]);

    expect(await mine.claims.take("k1")).toBe("won");
    expect(mine.reported).toEqual([
      expect.stringMatching(
        /^taking wake claim k1: wake claim k1 could not be read \(it is not a wake claim\)/,
      ),
    ]);
    expect(await theirs.claims.take("k1")).toBe("elsewhere");
    expect(await mine.claims.renew("k1")).toBe(true);
    await mine.claims.release("k1");
    expect(await theirs.claims.take("k1")).toBe("won");
    expect(theirs.reported).toEqual([]);
  } finally {
    await store.close();
  }
});

/** A SQLite store in a fresh directory whose wake claim k1 is stored as the raw `row`. */
async function storeWithRow(row: string): Promise<Store> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "wake-claim-unreadable-"));
  dirs.push(dir);
  const store = await createStore({ dataDir: dir });
  await store.space("dedupe").set("wake-claim:k1", "to be spoiled");
  const db = new Database(path.join(dir, "coworker.sqlite"));
  db.prepare("UPDATE keyv SET value = ? WHERE key = ?").run(row, "dedupe:wake-claim:k1");
  db.close();
  return store;
}

const unreadableRows: ReadonlyArray<readonly [string, string, string]> = [
  ["not JSON", "not json", "(it is not JSON)"],
  ["a non-claim in other text than the store writes", '{"value": {"owner": 42}}', "(it is not a wake claim)"],
  ["a non-claim with a null expiry", '{"value":{"owner":42},"expires":null}', "(it is not a wake claim)"],
  ["JSON with no value", '{"v":1}', "(it holds no value)"],
  ["JSON null", "null", "(it holds no value)"],
];

it.each(unreadableRows)("replaces a stored claim whose row is %s, reporting it", async (_, row, reason) => {
  const store = await storeWithRow(row);
  try {
    const mine = claimsOn(store.space("dedupe"));
    const theirs = claimsOn(store.space("dedupe"));

    expect(await mine.claims.take("k1")).toBe("won");
    expect(mine.reported).toEqual([expect.stringContaining(`wake claim k1 could not be read ${reason}`)]);
    expect(await theirs.claims.take("k1")).toBe("elsewhere");
    expect(await mine.claims.take("k1")).toBe("won");
    expect(mine.reported).toHaveLength(1);
    expect(theirs.reported).toEqual([]);
  } finally {
    await store.close();
  }
});

/**
 * A take of k1 through `space` (where the other process, `theirs`, replaces the unreadable claim
 * mid-take) finds it held elsewhere and reports nothing; `theirs` reported it once and holds it.
 */
async function expectLeftToThem(space: KeyValueSpace, theirs: ReturnType<typeof claimsOn>): Promise<void> {
  const mine = claimsOn(space);
  expect(await mine.claims.take("k1")).toBe("elsewhere");
  expect(mine.reported).toEqual([]);
  expect(theirs.reported).toHaveLength(1);
  expect(await theirs.claims.take("k1")).toBe("won");
}

it.each(unreadableRows)(
  "leaves a claim whose row is %s, replaced by another process between this one's read and its write, to that process",
  async (_, row) => {
    const store = await storeWithRow(row);
    try {
      const inner = store.space("dedupe");
      const theirs = claimsOn(inner);
      // Rows read as the store holds them; right before this process's compare-and-set over the
      // row it read, the other process replaces that row.
      const space = spaceLike(inner, {
        getRows: (keys) => inner.getRows!(keys),
        replaceIf: async (key, expected, value, ttlMs) => {
          expect(await theirs.claims.take("k1")).toBe("won");
          return inner.replaceIf(key, expected, value, ttlMs);
        },
      });
      await expectLeftToThem(space, theirs);
    } finally {
      await store.close();
    }
  },
);

it("leaves an unreadable claim another process replaced after the read to that process", async () => {
  const store = await createStore({ url: "memory:", dataDir: os.tmpdir() });
  try {
    const inner = store.space("dedupe");
    const theirs = claimsOn(inner);
    let reads = 0;
    // Right after this process reads the unreadable claim, the other process replaces it.
    const space = spaceLike(inner, {
      get: async <T>(key: string) => {
        const read = await inner.get<T>(key);
        reads += 1;
        if (reads === 1) expect(await theirs.claims.take("k1")).toBe("won");
        return read;
      },
    });
    await inner.set("wake-claim:k1", { owner: 42 });

    await expectLeftToThem(space, theirs);
  } finally {
    await store.close();
  }
});
