/**
 * Store failures are told apart: unreachable server, rejected credentials, a file or table another
 * program holds locked, misconfigured directory.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { SqliteAdapter } from "../../src/store/backends/sqlite-adapter.js";
import { waitOutLock } from "../../src/store/backends/sqlite-lock-wait.js";
import { createStore } from "../../src/store/create-store.js";
import { storeFailure } from "../../src/store/store-failure.js";

function withCode(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

describe("storeFailure", () => {
  it("calls a refused Redis connection unreachable, with the server fix", () => {
    const cause = withCode("connect ECONNREFUSED 127.0.0.1:6390", "ECONNREFUSED");
    const failure = storeFailure(
      new Error("cannot connect to the Redis store at redis://127.0.0.1:6390/0", { cause }),
      true,
      "/data",
    );
    expect(failure.kind).toBe("unreachable");
    expect(failure.fix).toContain("start the Redis / Postgres server");
  });

  it("tells a Postgres table locked by another client apart from a server that is down", () => {
    for (const code of ["55P03", "57014"]) {
      const cause = withCode("canceling statement due to lock timeout", code);
      const failure = storeFailure(
        new Error("cannot reach the Postgres store at postgres://127.0.0.1:5432/coworker: lock timeout", {
          cause,
        }),
        true,
        "/data",
      );
      expect(failure.retryable).toBe(true);
      expect(failure.fix).toContain("another client holds a lock on the store's table");
      expect(failure.fix).not.toContain("start the Redis / Postgres server");
    }
  });

  it("tells a SQLite file another program holds locked apart from a data directory to fix", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "coworker-store-failure-"));
    const file = join(dataDir, "coworker.sqlite");
    const locker = new Database(file, { timeout: 0 });
    try {
      locker.pragma("locking_mode = EXCLUSIVE");
      locker.exec("CREATE TABLE held (x)");
      // The store's wait for the lock, cut to nothing: its failure as opening reports it.
      const error = await waitOutLock(
        file,
        0,
        () => new SqliteAdapter({ file, table: "keyv", busyTimeoutMs: 0, synchronous: "NORMAL" }),
      ).catch(
        (caught: unknown) =>
          new Error(`cannot open the SQLite store at ${file}: ${(caught as Error).message}`, {
            cause: caught,
          }),
      );
      const failure = storeFailure(error, false, dataDir);
      expect(failure.reason).toMatch(/stayed locked by another connection/);
      expect(failure.retryable).toBe(true);
      expect(failure.fix).toContain("another program holds the SQLite file");
      expect(failure.fix).not.toContain("writable");
    } finally {
      locker.close();
    }
  });

  it("calls a wrong password rejected", () => {
    const failure = storeFailure(new Error("WRONGPASS invalid username-password pair"), true, "/data");
    expect(failure.kind).toBe("rejected");
    expect(failure.line()).toContain("the store rejected the credentials");
  });

  it("calls a data directory that cannot be created misconfigured, naming the directory", async () => {
    const dir = mkdtempSync(join(tmpdir(), "coworker-store-failure-"));
    const file = join(dir, "not-a-dir");
    writeFileSync(file, "");
    const dataDir = join(file, "data");
    const error = await createStore({ dataDir }).catch((caught: unknown) => caught);
    const failure = storeFailure(error, false, dataDir);
    expect(failure.kind).toBe("misconfigured");
    expect(failure.fix).toContain(`make ${dataDir} writable`);
    expect(failure.retryable).toBe(false);
  });
});
