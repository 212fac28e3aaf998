import { chmodSync, mkdirSync, mkdtempSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createStore } from "../../src/store/create-store.js";

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

describe("data files are owner-only", () => {
  let umask: number;
  beforeEach(() => {
    umask = process.umask(0o022);
  });
  afterEach(() => {
    process.umask(umask);
  });

  it("creates a missing data dir 0700 and the SQLite file, -wal and -shm 0600", async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), "modes-")), "data");
    const store = await createStore({ dataDir });
    try {
      await store.space("history").set("k", { text: "a conversation" });
      expect(mode(dataDir)).toBe("700");
      for (const file of ["coworker.sqlite", "coworker.sqlite-wal", "coworker.sqlite-shm"])
        expect([file, mode(join(dataDir, file))]).toEqual([file, "600"]);
    } finally {
      await store.close();
    }
  });

  it("keeps the mode of a data dir the operator made, and tightens a database file made before", async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), "modes-")), "data");
    mkdirSync(dataDir, { mode: 0o750 });
    chmodSync(dataDir, 0o750);
    const store = await createStore({ dataDir });
    await store.space("history").set("k", { text: "a conversation" });
    await store.close();
    chmodSync(join(dataDir, "coworker.sqlite"), 0o644);
    writeFileSync(join(dataDir, "coworker.sqlite-wal"), "");
    chmodSync(join(dataDir, "coworker.sqlite-wal"), 0o644);

    const reopened = await createStore({ dataDir });
    try {
      expect(await reopened.space("history").get("k")).toEqual({ text: "a conversation" });
      expect(mode(dataDir)).toBe("750");
      for (const file of ["coworker.sqlite", "coworker.sqlite-wal", "coworker.sqlite-shm"])
        expect([file, mode(join(dataDir, file))]).toEqual([file, "600"]);
    } finally {
      await reopened.close();
    }
  });
});
