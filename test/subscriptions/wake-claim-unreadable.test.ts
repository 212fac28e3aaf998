/**
 * A wake claim stored in a form that cannot be read — JSON that is not a claim, or a row that is
 * not even JSON (corrupt, or written by something else), and stored without expiry. A take read
 * the first as held elsewhere, for good: the message's wake-up was looked at again every few
 * minutes and never delivered; the second failed every take. A take now replaces it with its own
 * claim, for a take's time, and reports it; a renewal or release still never takes it as its own.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, expect, it } from "vitest";
import { createStore } from "../../src/store/create-store.js";
import type { KeyValueSpace } from "../../src/store/store.js";
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

it("replaces a stored claim whose row is not JSON, reporting it", async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), "wake-claim-not-json-"));
  dirs.push(dir);
  const store = await createStore({ dataDir: dir });
  try {
    const space = store.space("dedupe");
    await space.set("wake-claim:k1", "to be spoiled");
    const db = new Database(path.join(dir, "coworker.sqlite"));
    db.prepare("UPDATE keyv SET value = 'not json' WHERE key = ?").run("dedupe:wake-claim:k1");
    db.close();
    const mine = claimsOn(space);
    const theirs = claimsOn(space);

    expect(await mine.claims.take("k1")).toBe("won");
    expect(mine.reported).toEqual([expect.stringContaining("wake claim k1 could not be read (stored entry")]);
    expect(await theirs.claims.take("k1")).toBe("elsewhere");
    expect(theirs.reported).toEqual([]);
  } finally {
    await store.close();
  }
});

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
    const mine = claimsOn(space);
    await inner.set("wake-claim:k1", { owner: 42 });

    expect(await mine.claims.take("k1")).toBe("elsewhere");
    expect(mine.reported).toEqual([]);
    expect(theirs.reported).toHaveLength(1);
    expect(await theirs.claims.take("k1")).toBe("won");
  } finally {
    await store.close();
  }
});
