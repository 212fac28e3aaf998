/**
 * Byte budgets (store/byte-budget.ts): a key's bytes per window are claims written with
 * setIfAbsent and summed on read, with an injected clock: a take past the limit is refused with
 * what was used and when room frees; a settled claim counts its real bytes, a released one none;
 * claims end with the window; the count of claims is bounded; two connections to one SQLite file
 * (as two processes would have) together never pass the limit; a stored claim is a versioned record.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BYTE_CLAIM_KIND, byteClaimKey, DAY_MS, storeByteBudget } from "../../src/store/byte-budget.js";
import { tempStores } from "../support/temp-stores.js";

const open = tempStores("byte-budget-");

describe("storeByteBudget", () => {
  it("sums the claims, refuses what would pass the limit, and says what was used and when room frees", async () => {
    const store = await open("memory:");
    let now = 1_000;
    const budget = storeByteBudget(store.space("budgets"), { now: () => now });
    expect((await budget.take("up:a", 600, 1_000)).ok).toBe(true);
    now = 2_000;
    expect((await budget.take("up:a", 300, 1_000)).ok).toBe(true);
    // 900 used: 200 more would pass 1000; room for it once the first (600) claim ends.
    expect(await budget.take("up:a", 200, 1_000)).toEqual({
      ok: false,
      used: 900,
      tooMany: false,
      freesAt: 1_000 + DAY_MS,
    });
    expect((await budget.take("up:a", 100, 1_000)).ok).toBe(true);
    // Another key has its own bytes.
    expect((await budget.take("up:b", 1_000, 1_000)).ok).toBe(true);
    // More than the whole limit never fits.
    expect(await budget.take("up:c", 1_001, 1_000)).toMatchObject({ ok: false, freesAt: undefined });
  });

  it("counts a claim's settled bytes, none once released, and none after its window", async () => {
    const store = await open("memory:");
    let now = 0;
    const budget = storeByteBudget(store.space("budgets"), { now: () => now, windowMs: 10_000 });
    const held = await budget.take("up:a", 1_000, 1_000);
    if (!held.ok) throw new Error("refused");
    expect((await budget.take("up:a", 1, 1_000)).ok).toBe(false);
    await held.settle(400);
    expect((await budget.take("up:a", 600, 1_000)).ok).toBe(true);
    expect(await budget.take("up:a", 1, 1_000)).toMatchObject({ ok: false, used: 1_000 });
    await held.release();
    expect((await budget.take("up:a", 400, 1_000)).ok).toBe(true);
    // The window ends by the clock: the claims no longer count.
    now = 10_000;
    expect((await budget.take("up:a", 1_000, 1_000)).ok).toBe(true);
  });

  it("holds at most maxClaims claims per window, however small", async () => {
    const store = await open("memory:");
    const budget = storeByteBudget(store.space("budgets"), { now: () => 5, maxClaims: 3 });
    for (let i = 0; i < 3; i += 1) expect((await budget.take("up:a", 1, 1_000)).ok).toBe(true);
    expect(await budget.take("up:a", 1, 1_000)).toEqual({
      ok: false,
      used: 3,
      tooMany: true,
      freesAt: 5 + DAY_MS,
    });
  });

  it("writes each claim as a versioned record, and refuses to read one it does not know", async () => {
    const store = await open("memory:");
    const space = store.space("budgets");
    const budget = storeByteBudget(space, { now: () => 7 });
    expect((await budget.take("up:a", 42, 1_000)).ok).toBe(true);
    expect(await space.get(byteClaimKey("up:a", 0))).toEqual({
      v: 1,
      kind: BYTE_CLAIM_KIND,
      data: { bytes: 42, at: 7 },
    });
    await space.set(byteClaimKey("up:a", 1), { v: 99, kind: BYTE_CLAIM_KIND, data: {} });
    await expect(budget.take("up:a", 1, 1_000)).rejects.toThrow(/newer Coworker/);
  });

  it("reads the v1 fixture of a claim", async () => {
    const fixture = JSON.parse(
      await readFile(join(import.meta.dirname, "fixtures/byte-claim.v1.json"), "utf8"),
    );
    const store = await open("memory:");
    const space = store.space("budgets");
    await space.set(byteClaimKey("uploads:slack:U1", 0), fixture);
    const budget = storeByteBudget(space, { now: () => fixture.data.at + 1 });
    expect(await budget.take("uploads:slack:U1", 1_000, 1_000)).toMatchObject({
      ok: false,
      used: fixture.data.bytes,
    });
  });

  it("two connections to one SQLite file, taking at once, together stay within the limit", async () => {
    const [one, two] = [await open(undefined), await open(undefined)];
    const budgets = [one, two].map((store) => storeByteBudget(store.space("budgets")));
    const takes = await Promise.all(
      Array.from({ length: 12 }, (_, i) => budgets[i % 2]!.take("up:a", 100, 500)),
    );
    const granted = takes.filter((take) => take.ok).length;
    // Racing claims may all be refused (each read back the others): never more than fit.
    expect(granted).toBeLessThanOrEqual(5);
    const check = await budgets[0]!.take("up:a", 501, 500);
    expect(check.ok ? 0 : check.used).toBe(granted * 100);
    // Once the race is over, what is left is taken in turn.
    for (let i = granted; i < 5; i += 1) expect((await budgets[i % 2]!.take("up:a", 100, 500)).ok).toBe(true);
    expect((await budgets[1]!.take("up:a", 100, 500)).ok).toBe(false);
  });
});
