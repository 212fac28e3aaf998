/**
 * The upload gate (attachments/upload-gate.ts) with an injected clock and free-space reader: a
 * person's bytes of the day in the store (a file of unknown size holds the per-file cap until it
 * is settled), the free-space floor read at most every few seconds with what was admitted since
 * taken off, and a limit that cannot be checked refusing with a reason.
 */
import pino from "pino";
import { describe, expect, it } from "vitest";
import { createUploadGate, type UploadGateOptions } from "../../src/attachments/upload-gate.js";
import { type ByteBudget, storeByteBudget } from "../../src/store/byte-budget.js";
import { createStore } from "../../src/store/create-store.js";

const MB = 1024 * 1024;
const logger = pino({ level: "silent" });

async function gateWith(overrides: Partial<UploadGateOptions> & { clock?: { now: number } } = {}) {
  const store = await createStore({ url: "memory:", dataDir: "/nonexistent" });
  const clock = overrides.clock ?? { now: 1_000_000 };
  const gate = createUploadGate({
    budget: storeByteBudget(store.space("budgets"), { now: () => clock.now }),
    bytesPerPerson: 10 * MB,
    workspaceRoot: "/workspace",
    minFreeBytes: 0,
    freeBytes: async () => 100 * MB * 1024,
    now: () => clock.now,
    logger,
    ...overrides,
  });
  return { gate, store, clock };
}

describe("upload gate: bytes per person", () => {
  it("lets a person's files through up to the daily bytes, then refuses with how much and when; others are apart", async () => {
    const { gate, clock } = await gateWith();
    const first = await gate.admit("slack", "U1", 6 * MB, 20 * MB);
    expect(first.ok).toBe(true);
    clock.now += 3_600_000;
    const second = await gate.admit("slack", "U1", 5 * MB, 20 * MB);
    expect(second).toEqual({
      ok: false,
      reason:
        "your files of the last 24 hours (6.0 MB) and this one (5.0 MB) would pass the 10.0 MB saved per person in that time; there is room again in about 23 hours",
    });
    // The same id on another platform, and another person, have their own bytes.
    expect((await gate.admit("telegram", "U1", 9 * MB, 20 * MB)).ok).toBe(true);
    expect((await gate.admit("slack", "U2", 9 * MB, 20 * MB)).ok).toBe(true);
    // A day after the first file, its bytes no longer count.
    clock.now += 23 * 3_600_000;
    expect((await gate.admit("slack", "U1", 9 * MB, 20 * MB)).ok).toBe(true);
  });

  it("a file of unknown size holds the per-file cap until settled to its real size; a failed one gives its bytes back", async () => {
    const { gate } = await gateWith();
    const unknown = await gate.admit("slack", "U1", undefined, 8 * MB);
    if (!unknown.ok) throw new Error(unknown.reason);
    expect((await gate.admit("slack", "U1", 3 * MB, 8 * MB)).ok).toBe(false);
    await unknown.settle(1 * MB);
    const failed = await gate.admit("slack", "U1", 8 * MB, 8 * MB);
    if (!failed.ok) throw new Error(failed.reason);
    expect((await gate.admit("slack", "U1", 2 * MB, 8 * MB)).ok).toBe(false);
    await failed.release();
    expect((await gate.admit("slack", "U1", 9 * MB, 9 * MB)).ok).toBe(true);
  });

  it("refuses, saying so, when the store cannot count", async () => {
    const failing: ByteBudget = {
      windowMs: 86_400_000,
      maxClaims: 500,
      take: async () => {
        throw new Error("store down");
      },
    };
    const { gate } = await gateWith({ budget: failing });
    expect(await gate.admit("slack", "U1", 1, MB)).toEqual({
      ok: false,
      reason: "your upload allowance could not be checked just now",
    });
  });
});

describe("upload gate: free disk space", () => {
  it("refuses while the free space less the file would fall under the floor", async () => {
    let free = 100 * MB;
    const { gate, clock } = await gateWith({ minFreeBytes: 95 * MB, freeBytes: async () => free });
    expect((await gate.admit("slack", "U1", 4 * MB, 20 * MB)).ok).toBe(true);
    // The 4 MB admitted since the reading count: 100 - 4 - 2 < 95.
    const refused = await gate.admit("slack", "U2", 2 * MB, 20 * MB);
    expect(refused).toEqual({
      ok: false,
      reason: "the server is low on disk space (it keeps 95.0 MB free), so files are not being saved for now",
    });
    // Space freed, read again after the cache's few seconds.
    free = 200 * MB;
    clock.now += 5_000;
    expect((await gate.admit("slack", "U2", 2 * MB, 20 * MB)).ok).toBe(true);
  });

  it("counts a file settled larger than it was held at its real size", async () => {
    const { gate } = await gateWith({ minFreeBytes: 90 * MB, freeBytes: async () => 100 * MB });
    const first = await gate.admit("slack", "U1", 1 * MB, 20 * MB);
    if (!first.ok) throw new Error(first.reason);
    await first.settle(9 * MB); // the platform said 1 MB; 9 MB were written
    // 100 - 9 - 2 < 90.
    expect((await gate.admit("slack", "U2", 2 * MB, 20 * MB)).ok).toBe(false);
  });

  it("keeps counting a file still downloading when the free space is read again", async () => {
    const { gate, clock } = await gateWith({ minFreeBytes: 90 * MB, freeBytes: async () => 100 * MB });
    expect((await gate.admit("slack", "U1", 8 * MB, 20 * MB)).ok).toBe(true); // not settled yet
    clock.now += 5_000; // a fresh reading, taken before the 8 MB are on disk
    // 100 - 8 - 3 < 90.
    expect((await gate.admit("slack", "U2", 3 * MB, 20 * MB)).ok).toBe(false);
  });

  it("reads the free space at most once per few seconds, and once for files arriving together", async () => {
    let reads = 0;
    const { gate, clock } = await gateWith({
      minFreeBytes: 1,
      freeBytes: async () => {
        reads += 1;
        return 10_000 * MB;
      },
    });
    await Promise.all(Array.from({ length: 5 }, (_, i) => gate.admit("slack", `U${i}`, 1, MB)));
    clock.now += 4_999;
    await gate.admit("slack", "U1", 1, MB);
    expect(reads).toBe(1);
    clock.now += 1;
    await gate.admit("slack", "U1", 1, MB);
    expect(reads).toBe(2);
  });

  it("a file refused for the person's bytes does not count against the disk", async () => {
    const { gate } = await gateWith({
      minFreeBytes: 80 * MB,
      freeBytes: async () => 100 * MB,
      bytesPerPerson: 5 * MB,
    });
    expect((await gate.admit("slack", "U1", 6 * MB, 20 * MB)).ok).toBe(false);
    expect((await gate.admit("slack", "U2", 5 * MB, 20 * MB)).ok).toBe(true);
    expect((await gate.admit("slack", "U3", 5 * MB, 20 * MB)).ok).toBe(true);
  });

  it("refuses, saying so, when the free space cannot be read", async () => {
    const { gate } = await gateWith({
      minFreeBytes: 1,
      freeBytes: async () => {
        throw Object.assign(new Error("ENOENT"), { code: "ENOENT" });
      },
    });
    expect(await gate.admit("slack", "U1", 1, MB)).toEqual({
      ok: false,
      reason: "the server's free disk space could not be checked",
    });
  });

  it("with no floor (0), never reads the free space", async () => {
    const { gate } = await gateWith({
      freeBytes: async () => {
        throw new Error("not to be read");
      },
    });
    expect((await gate.admit("slack", "U1", 1, MB)).ok).toBe(true);
  });

  it("reads the real filesystem by default", async () => {
    const { gate } = await gateWith({
      freeBytes: undefined,
      workspaceRoot: import.meta.dirname,
      minFreeBytes: 1,
    });
    expect((await gate.admit("slack", "U1", 1, MB)).ok).toBe(true);
  });
});
