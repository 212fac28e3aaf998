/**
 * The single-process guard on SQLite and Postgres: a second holder is refused with one line while
 * the first lives, and the lock is free again once the first releases it or dies — SIGKILLed, in
 * a real child process. Real SQLite files, a real PostgreSQL server.
 */
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { describe, expect, it, vi } from "vitest";
import { ServiceFailure } from "../../src/core/failure.js";
import { createStore } from "../../src/store/create-store.js";
import { type HeldLock, takeSingleProcessLock } from "../../src/store/single-process-lock.js";
import { postgresForSuite } from "../support/postgres-server.js";
import { REPO_ROOT } from "../support/repo-root.js";

function tempDir(): string {
  return mkdtempSync(path.join(os.tmpdir(), "coworker-lock-"));
}

/** The refusal's one line, or a failure when the lock was taken after all. */
async function refusal(options: { url?: string; dataDir: string }): Promise<string> {
  const held = await takeSingleProcessLock({ ...options, waitMs: 0 }).catch((error: unknown) => error);
  if (!(held instanceof ServiceFailure)) {
    await (held as HeldLock | undefined)?.release();
    throw new Error("the lock was taken while another holder lived");
  }
  return held.line();
}

async function take(options: { url?: string; dataDir: string; waitMs?: number }): Promise<HeldLock> {
  const held = await takeSingleProcessLock({ waitMs: 0, ...options });
  if (!held) throw new Error("no lock for this store");
  return held;
}

/** A child process holding the lock; `kill9` SIGKILLs it and resolves once it is gone. */
async function lockingChild(dataDir: string, url?: string): Promise<{ kill9(): Promise<void> }> {
  const args = ["--import", "tsx", "test/support/store-lock-child.ts", dataDir, ...(url ? [url] : [])];
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes("LOCKED\n")) resolve();
    });
    child.on("exit", (code) => reject(new Error(`lock child exited ${code} before locking: ${stderr}`)));
  });
  return {
    kill9: async () => {
      child.kill("SIGKILL");
      await exited;
    },
  };
}

describe("single-process lock on SQLite", () => {
  it("refuses a second holder of one data folder with one line, and admits the next once released", async () => {
    const dataDir = tempDir();
    const first = await take({ dataDir });
    expect(await refusal({ dataDir })).toBe(
      `the store is misconfigured: another Coworker process is using the data folder ${dataDir} — fix: ` +
        "run one process per store, or use Redis (COWORKER_STORE_URL=redis://…) to run several",
    );
    const other = await take({ dataDir: tempDir() }); // another folder is another store
    await first.release();
    const next = await take({ dataDir });
    await next.release();
    await other.release();
  });

  it("waits for a holder that stops meanwhile (a restart overlapping the old process's shutdown)", async () => {
    const dataDir = tempDir();
    const first = await take({ dataDir });
    const waits: string[] = [];
    const next = await takeSingleProcessLock({
      dataDir,
      waitMs: 60_000,
      onWait: (line) => {
        waits.push(line);
        void first.release();
      },
    });
    expect(next).toBeDefined();
    expect(waits).toEqual([
      `another Coworker process is using the data folder ${dataDir}; waiting up to 60 s for it to stop`,
    ]);
    await next?.release();
  });

  it("is free again once its holder is SIGKILLed", async () => {
    const dataDir = tempDir();
    const child = await lockingChild(dataDir);
    expect(await refusal({ dataDir })).toContain("another Coworker process is using the data folder");
    await child.kill9();
    const next = await take({ dataDir });
    await next.release();
  });

  it("never blocks opening the store itself (doctor opens it beside a running service)", async () => {
    const dataDir = tempDir();
    const held = await take({ dataDir });
    const store = await createStore({ dataDir });
    expect(await store.ping()).toEqual({ ok: true });
    await store.close();
    await held.release();
  });

  it("takes no lock on Redis or memory:, where several processes (or none to meet) are fine", async () => {
    const dataDir = tempDir();
    expect(await takeSingleProcessLock({ url: "redis://127.0.0.1:1", dataDir })).toBeUndefined();
    expect(await takeSingleProcessLock({ url: "memory:", dataDir })).toBeUndefined();
  });
});

describe("single-process lock on Postgres", () => {
  const server = postgresForSuite();

  it("refuses a second holder of one database with one line, and admits the next once released", async () => {
    const dataDir = tempDir();
    const first = await take({ url: server.url, dataDir });
    expect(await refusal({ url: server.url, dataDir: tempDir() })).toBe(
      `the store is misconfigured: another Coworker process is using the Postgres database postgres://127.0.0.1:${server.port}/postgres — fix: ` +
        "run one process per store, or use Redis (COWORKER_STORE_URL=redis://…) to run several",
    );
    await first.release();
    const next = await take({ url: server.url, dataDir });
    await next.release();
  });

  it("is free again once its holder is SIGKILLed (the server ends its session)", async () => {
    const dataDir = tempDir();
    const child = await lockingChild(dataDir, server.url);
    expect(await refusal({ url: server.url, dataDir })).toContain(
      "another Coworker process is using the Postgres database",
    );
    await child.kill9();
    // The server notices the closed socket on its own schedule: the wait covers that.
    const next = await take({ url: server.url, dataDir, waitMs: 20_000 });
    await next.release();
  }, 40_000);

  it("bounds how long the server keeps a vanished holder's session: its own keepalive, not the OS's 2 h", async () => {
    // The lock's own connection (the real client, on the real server), to SHOW its session's settings.
    const clients: pg.Client[] = [];
    const connect = pg.Client.prototype.connect;
    const spy = vi.spyOn(pg.Client.prototype, "connect").mockImplementation(function (this: pg.Client) {
      clients.push(this);
      return Reflect.apply(connect, this, []);
    } as typeof connect);
    const held = await take({ url: server.url, dataDir: tempDir() }).finally(() => spy.mockRestore());
    const [client] = clients;
    if (!client) throw new Error("the lock opened no connection");
    const show = async (name: string) => (await client.query(`SHOW ${name}`)).rows[0][name];
    expect(await show("tcp_keepalives_idle")).toBe("30");
    expect(await show("tcp_keepalives_interval")).toBe("10");
    expect(await show("tcp_keepalives_count")).toBe("3");
    expect(await show("tcp_user_timeout")).toBe("60000");
    await held.release();
  });

  it("fails with the reason when the database cannot be reached", async () => {
    await expect(
      takeSingleProcessLock({ url: "postgres://coworker@127.0.0.1:1/postgres", dataDir: tempDir() }),
    ).rejects.toThrow(/cannot reach the Postgres store at postgres:\/\/127\.0\.0\.1:1\/postgres/);
  });
});
