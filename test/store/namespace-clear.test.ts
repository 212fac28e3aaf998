/**
 * clear() on a namespace of a backend whose namespaces share one adapter (SQLite, Postgres, the
 * in-memory Map): refused, because the adapter cannot tell whose rows are whose (keyv writes each
 * namespace into the adapter's one `namespace` field, the last one wins). It used to delete
 * another namespace's rows (SQLite: `LIKE 'budgets%'` whichever namespace was cleared).
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Backend } from "../../src/store/backends/backend.js";
import { openMemoryBackend } from "../../src/store/backends/memory.js";
import { openPostgresBackend } from "../../src/store/backends/postgres.js";
import { openSqliteBackend } from "../../src/store/backends/sqlite.js";
import { type PostgresServer, startPostgresServer } from "../support/postgres-server.js";

const noErrors = (error: unknown) => {
  throw error;
};

let dataDir = "";
let postgres: PostgresServer | undefined;
beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), "coworker-clear-"));
  postgres = await startPostgresServer();
});
afterAll(async () => {
  await postgres?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

/** `adapter`: the shared adapter's own clear refuses too (the memory backend's is a plain Map). */
const BACKENDS: ReadonlyArray<{ name: string; adapter: boolean; open: () => Promise<Backend> }> = [
  {
    name: "sqlite",
    adapter: true,
    open: () => openSqliteBackend(path.join(dataDir, "clear.sqlite"), noErrors),
  },
  {
    name: "postgres",
    adapter: true,
    open: () => {
      if (!postgres) throw new Error("postgres did not start (see the setup error above)");
      return openPostgresBackend(postgres.url, "test", noErrors);
    },
  },
  { name: "memory", adapter: false, open: async () => openMemoryBackend(noErrors) },
];

describe.each(BACKENDS)("clear on a shared adapter: $name", ({ adapter, open }) => {
  it("is refused with a clear error and deletes no namespace's rows, its own or another's", async () => {
    const backend = await open();
    try {
      await backend.keyv("sessions").set("rec:1", "s");
      await backend.keyv("budgets").set("slot:1", "b");
      // "budgets" is the namespace made last: the one the shared adapter's field names.
      await expect(backend.keyv("sessions").clear()).rejects.toThrow(
        /cannot clear namespace sessions: its rows share one table with every other namespace/,
      );
      await expect(backend.keyv("budgets").clear()).rejects.toThrow(/cannot clear namespace budgets/);
      if (adapter) {
        await expect(backend.keyv("sessions").store.clear()).rejects.toThrow(/cannot clear a namespace/);
      }
      expect(await backend.keyv("budgets").get("slot:1")).toBe("b");
      expect(await backend.keyv("sessions").get("rec:1")).toBe("s");
    } finally {
      await backend.close();
    }
  });
});
