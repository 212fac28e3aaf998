/**
 * Background checkpoints of the SQLite store: the store's connection never checkpoints itself,
 * a worker thread copies the log into the file once enough rows were committed (and catches up so
 * the log starts over, even under writes that never pause), stops when the store has been quiet,
 * and when it cannot run the connection checkpoints itself again.
 */
import { execFile } from "node:child_process";
import { statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteAdapter } from "../../src/store/backends/sqlite-adapter.js";
import { SqliteCheckpointer } from "../../src/store/backends/sqlite-checkpointer.js";
import { eventually } from "../support/eventually.js";

/** Bytes in the database file itself (committed pages reach it only through a checkpoint). */
function fileBytes(file: string): number {
  return statSync(file).size;
}

/** Commit 1,200 rows of 3 kB (about 4 MB of log) through a fresh adapter with these checkpoint settings. */
async function commitRows(file: string, rowsPerCheckpoint: number): Promise<SqliteAdapter> {
  const adapter = new SqliteAdapter({
    file,
    table: "keyv",
    busyTimeoutMs: 1_000,
    synchronous: "NORMAL",
    checkpoints: { rowsPerCheckpoint, idleStopMs: 60_000 },
  });
  const big = "x".repeat(3_000);
  for (let round = 0; round < 12; round += 1)
    await Promise.all(Array.from({ length: 100 }, (_, i) => adapter.set(`k${round}-${i}`, big)));
  return adapter;
}

describe("SqliteCheckpointer", () => {
  let root: string;
  let file: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "coworker-checkpoints-"));
    file = path.join(root, "db.sqlite");
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("the store's connection never checkpoints itself: the log reaches the file only through the worker", async () => {
    const never = await commitRows(file, Number.MAX_SAFE_INTEGER);
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(fileBytes(file)).toBeLessThan(100_000);
    } finally {
      await never.disconnect();
    }
    const other = path.join(root, "other.sqlite");
    const worker = await commitRows(other, 1_000);
    try {
      await eventually(() => fileBytes(other) > 2_000_000, "the worker's checkpoint");
      expect(await worker.get("k11-99")).toBe("x".repeat(3_000));
    } finally {
      await worker.disconnect();
    }
  });

  it("the log starts over under writes that never pause: it does not grow with what was written", async () => {
    const adapter = new SqliteAdapter({
      file,
      table: "keyv",
      busyTimeoutMs: 1_000,
      synchronous: "NORMAL",
      checkpoints: { rowsPerCheckpoint: 200, idleStopMs: 60_000 },
    });
    const big = "x".repeat(3_000);
    const commitRound = (round: number) =>
      Promise.all(Array.from({ length: 20 }, (_, i) => adapter.set(`k${round}-${i}`, big)));
    let largestLog = 0;
    try {
      for (let round = 0; round < 20; round += 1) await commitRound(round);
      await new Promise((resolve) => setTimeout(resolve, 500)); // the worker is up and has run a pass
      // 12,000 rows of 3 kB (about 40 MB of log), a commit every loop turn: no quiet moment for a
      // pass to catch up in.
      for (let round = 20; round < 620; round += 1) {
        await commitRound(round);
        largestLog = Math.max(largestLog, fileBytes(`${file}-wal`));
      }
      expect(await adapter.get("k619-19")).toBe(big);
    } finally {
      await adapter.disconnect();
    }
    // A log that never started over would hold all ~40 MB. How far it gets before a pass catches
    // up depends on how much CPU the worker thread gets: on a loaded machine it reached 11.5 MB.
    expect(largestLog).toBeLessThan(20_000_000);
  });

  it("closing the store waits for the worker's last checkpoint even when nothing else keeps the process alive", async () => {
    // The worker does not hold the process open while it idles; at close it must, or a process whose
    // only work left is closing the store ends before the close resolves (exit code 13).
    const adapterModule = path.resolve(import.meta.dirname, "../../src/store/backends/sqlite-adapter.ts");
    const script = [
      `const { SqliteAdapter } = await import(${JSON.stringify(adapterModule)});`,
      `const adapter = new SqliteAdapter({ file: ${JSON.stringify(file)}, table: "keyv", busyTimeoutMs: 1000,`,
      `  synchronous: "NORMAL", checkpoints: { rowsPerCheckpoint: 10, idleStopMs: 60000 } });`,
      `await Promise.all(Array.from({ length: 20 }, (_, i) => adapter.set("k" + i, "v")));`,
      `await adapter.disconnect();`,
      `console.log("closed");`,
    ].join("\n");
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", script],
      { timeout: 30_000 },
    );
    expect(stdout.trim()).toBe("closed");
  });

  it("stops its worker after a quiet spell and starts it again on the next need", async () => {
    const calls: number[] = [];
    const db = new Database(file);
    db.pragma("journal_mode = WAL");
    db.exec("CREATE TABLE t(v)");
    const checkpointer = new SqliteCheckpointer(
      {
        file,
        busyTimeoutMs: 1_000,
        autoCheckpoint: (pages) => calls.push(pages),
        holdCommits: () => undefined,
        onError: (error) => {
          throw error;
        },
      },
      { rowsPerCheckpoint: 10, idleStopMs: 100 },
    );
    try {
      expect(calls).toEqual([0]);
      db.exec("INSERT INTO t VALUES (1)");
      checkpointer.committed(10);
      expect(checkpointer.active).toBe(true);
      await eventually(() => !checkpointer.active, "the idle stop");
      checkpointer.committed(10);
      expect(checkpointer.active).toBe(true);
    } finally {
      await checkpointer.close();
      db.close();
    }
    expect(checkpointer.active).toBe(false);
    checkpointer.committed(100);
    expect(checkpointer.active).toBe(false);
  });

  it("hands checkpoints back to the connection when the worker cannot open the file", async () => {
    const calls: number[] = [];
    const errors: unknown[] = [];
    const checkpointer = new SqliteCheckpointer(
      {
        file: path.join(root, "missing-dir", "db.sqlite"),
        busyTimeoutMs: 100,
        autoCheckpoint: (pages) => calls.push(pages),
        holdCommits: () => undefined,
        onError: (error) => errors.push(error),
      },
      { rowsPerCheckpoint: 1, idleStopMs: 60_000 },
    );
    checkpointer.committed(5);
    await eventually(() => errors.length > 0, "the worker's failure");
    expect(calls).toEqual([0, 1_000]);
    expect(String(errors[0])).toMatch(/directory does not exist|unable to open/);
    checkpointer.committed(5);
    expect(checkpointer.active).toBe(false);
    await checkpointer.close();
  });
});
