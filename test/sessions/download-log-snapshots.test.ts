/**
 * A session's download log is compacted as it grows (download-log.ts): a load reads its head, then
 * the snapshot with the pages after it, however many downloads the session made, and still knows
 * every file — also when another process appends a file while a snapshot is written (real
 * redis-server, two connections), when the head names a snapshot replaced since, and for a log
 * written before snapshots existed (pages only); a catch-up after the first read reads the pages
 * after those it read, one key when there are none.
 */
import os from "node:os";
import pino from "pino";
import { describe, expect, it } from "vitest";
import {
  DownloadLog,
  downloadHeadKey,
  downloadPageKey,
  downloadSnapshotKey,
} from "../../src/sessions/download-log.js";
import { DownloadedFiles } from "../../src/sessions/downloaded-files.js";
import { createStore } from "../../src/store/create-store.js";
import { getAll, type KeyValueSpace } from "../../src/store/store.js";
import { toVersioned } from "../../src/store/versioned.js";
import { openStore, tempDir } from "./helpers/harness.js";
import { redisPerFile } from "./helpers/redis-per-file.js";

const SILENT = pino({ level: "silent" });

/** The files of log `logId` as the log has them (read as a workspace's first use reads them). */
async function opened(log: DownloadLog, logId: string, logger: pino.Logger): Promise<DownloadedFiles> {
  const files = DownloadedFiles.fresh(log, logId, logger);
  await files.catchUp();
  return files;
}

/** `space` counting its round trips (get or getMany calls) and the keys they read. */
function counting(space: KeyValueSpace) {
  const seen = { roundTrips: 0, keys: 0 };
  const wrapped: KeyValueSpace = {
    get: (key) => {
      seen.roundTrips += 1;
      seen.keys += 1;
      return space.get(key);
    },
    getMany: (keys) => {
      seen.roundTrips += 1;
      seen.keys += keys.length;
      return getAll(space, keys);
    },
    set: (key, value, ttl) => space.set(key, value, ttl),
    delete: (key) => space.delete(key),
    setIfAbsent: (key, value, ttl) => space.setIfAbsent(key, value, ttl),
    replaceIf: (key, expected, value, ttlMs) => space.replaceIf(key, expected, value, ttlMs),
    deleteIf: (key, expected) => space.deleteIf(key, expected),
  };
  return { space: wrapped, seen };
}

/** `space` whose snapshot writes wait until `release` is called. */
function holdingSnapshots(space: KeyValueSpace) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let held!: () => void;
  const reached = new Promise<void>((resolve) => {
    held = resolve;
  });
  const wrapped: KeyValueSpace = {
    get: (key) => space.get(key),
    getMany: (keys) => getAll(space, keys),
    set: (key, value, ttl) => space.set(key, value, ttl),
    delete: (key) => space.delete(key),
    setIfAbsent: async (key, value, ttl) => {
      if (key.startsWith("dlsnap:")) {
        held();
        await gate;
      }
      return space.setIfAbsent(key, value, ttl);
    },
    replaceIf: (key, expected, value, ttlMs) => space.replaceIf(key, expected, value, ttlMs),
    deleteIf: (key, expected) => space.deleteIf(key, expected),
  };
  return { space: wrapped, reached, release };
}

/** Record `count` files one command (one tick, one page) at a time. */
async function downloadOneByOne(files: DownloadedFiles, count: number, prefix = "file"): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    files.add(`/ws/dl/${prefix}-${i}.sh`);
    await files.written();
  }
}

describe("a session's download log, compacted", () => {
  it("after 1,000 one-file downloads a reopen reads 2 round trips (the head, then the snapshot and the pages after it) and knows every file", async () => {
    const store = await openStore(tempDir());
    const space = store.space("sessions");
    await downloadOneByOne(DownloadedFiles.fresh(new DownloadLog(space), "s1", SILENT), 1_000);

    const { space: watched, seen } = counting(space);
    const reopened = await opened(new DownloadLog(watched), "s1", SILENT);
    expect(reopened.size).toBe(1_000);
    expect(reopened.has("/ws/dl/file-0.sh") && reopened.has("/ws/dl/file-999.sh")).toBe(true);
    expect(seen.roundTrips).toBe(2);
    expect(seen.keys).toBeLessThanOrEqual(2 + 1 + 16);
    // Only the latest snapshot is kept; every page still is (a build without snapshots reads them).
    expect(await space.get(downloadSnapshotKey("s1", 992))).toBeDefined();
    expect(await space.get(downloadSnapshotKey("s1", 976))).toBeUndefined();
    expect((await new DownloadLog(space).read("s1")).next).toBe(1_000);
    await store.close();
  });

  describe("with two processes on one redis-server", () => {
    const redis = redisPerFile();

    it("a file the other process appends while a snapshot is written is read after it, though the head is set back to that snapshot", async () => {
      const [storeA, storeB] = await Promise.all([
        createStore({ url: redis.url, dataDir: os.tmpdir() }),
        createStore({ url: redis.url, dataDir: os.tmpdir() }),
      ]);
      const spaceA = holdingSnapshots(storeA.space("sessions"));
      const spaceB = storeB.space("sessions");
      const a = DownloadedFiles.fresh(new DownloadLog(spaceA.space), "s1", SILENT);
      await downloadOneByOne(a, 15, "a");
      const b = await opened(new DownloadLog(spaceB), "s1", SILENT);
      // A's 16th page makes a snapshot due: A holds every file of pages 0-15 and writes them…
      a.add("/ws/dl/a-15.sh");
      const aWritten = a.written();
      await spaceA.reached;
      // …while B appends its file: page 15 is taken, so it goes to page 16, past A's snapshot.
      b.add("/ws/dl/from-b.sh");
      await b.written();
      expect(await spaceB.get(downloadPageKey("s1", 16))).toMatchObject({
        data: { files: ["/ws/dl/from-b.sh"] },
      });
      // B's own snapshot (pages 0-16) and head went first; A's head now names its older one.
      expect(await spaceB.get(downloadHeadKey("s1"))).toMatchObject({ data: { snapshot: 17 } });
      spaceA.release();
      await aWritten;
      expect(await spaceB.get(downloadHeadKey("s1"))).toMatchObject({ data: { snapshot: 16 } });
      const snapshotA = await spaceB.get<{ data: { files: string[] } }>(downloadSnapshotKey("s1", 16));
      expect(snapshotA?.data.files).toHaveLength(16);
      expect(snapshotA?.data.files).not.toContain("/ws/dl/from-b.sh");

      const reader = await opened(new DownloadLog(storeB.space("sessions")), "s1", SILENT);
      expect(reader.size).toBe(17);
      expect(reader.has("/ws/dl/from-b.sh")).toBe(true);
      // A takes in B's file when it catches up.
      await a.catchUp();
      expect(a.has("/ws/dl/from-b.sh")).toBe(true);
      await Promise.all([storeA.close(), storeB.close()]);
    });

    it("two processes opening a long log compact it at once: one snapshot is kept, and the files each adds next are read", async () => {
      const [storeA, storeB] = await Promise.all([
        createStore({ url: redis.url, dataDir: os.tmpdir() }),
        createStore({ url: redis.url, dataDir: os.tmpdir() }),
      ]);
      const seed = new DownloadLog(storeA.space("sessions"));
      for (let n = 0; n < 16; n += 1) await seed.claim("s1", n, [`/ws/old-${n}.sh`]);
      const [a, b] = await Promise.all([
        opened(new DownloadLog(storeA.space("sessions")), "s1", SILENT),
        opened(new DownloadLog(storeB.space("sessions")), "s1", SILENT),
      ]);
      a.add("/ws/dl/from-a.sh");
      b.add("/ws/dl/from-b.sh");
      await Promise.all([a.written(), b.written()]);
      expect(await storeA.space("sessions").get(downloadHeadKey("s1"))).toMatchObject({
        data: { snapshot: 16 },
      });
      const reader = await opened(new DownloadLog(storeA.space("sessions")), "s1", SILENT);
      expect([...reader]).toEqual(expect.arrayContaining(["/ws/dl/from-a.sh", "/ws/dl/from-b.sh"]));
      expect(reader.size).toBe(18);
      await Promise.all([storeA.close(), storeB.close()]);
    });

    it("a catch-up (each lease taken: lease-gate.ts) reads one key while nothing was added — not the head as well — and still takes in what the other process added", async () => {
      const [storeA, storeB] = await Promise.all([
        createStore({ url: redis.url, dataDir: os.tmpdir() }),
        createStore({ url: redis.url, dataDir: os.tmpdir() }),
      ]);
      const { space, seen } = counting(storeA.space("sessions"));
      const a = await opened(new DownloadLog(space), "ws1", SILENT);
      const b = await opened(new DownloadLog(storeB.space("sessions")), "ws1", SILENT);
      seen.roundTrips = 0;
      seen.keys = 0;
      // An empty log: still one key.
      await a.catchUp();
      expect(seen).toEqual({ roundTrips: 1, keys: 1 });
      b.add("/ws/dl/from-b.sh");
      await b.written();
      await a.catchUp();
      expect(a.has("/ws/dl/from-b.sh")).toBe(true);
      seen.roundTrips = 0;
      seen.keys = 0;
      await a.catchUp();
      expect(seen).toEqual({ roundTrips: 1, keys: 1 });
      await Promise.all([storeA.close(), storeB.close()]);
    });
  });

  it("a head naming a snapshot replaced since is read from page 0, and the next write compacts again", async () => {
    const store = await openStore(tempDir());
    const space = store.space("sessions");
    await downloadOneByOne(DownloadedFiles.fresh(new DownloadLog(space), "s1", SILENT), 40);
    expect(await space.get(downloadSnapshotKey("s1", 16))).toBeUndefined();
    await space.set(downloadHeadKey("s1"), toVersioned("downloaded-files-head", { snapshot: 16 }));
    const reopened = await opened(new DownloadLog(space), "s1", SILENT);
    expect(reopened.size).toBe(40);
    await reopened.written();
    expect(await space.get(downloadHeadKey("s1"))).toMatchObject({ data: { snapshot: 40 } });
    await store.close();
  });

  it("a log of pages only (written before snapshots) is read whole, and compacted as it opens", async () => {
    const store = await openStore(tempDir());
    const space = store.space("sessions");
    const log = new DownloadLog(space);
    for (let n = 0; n < 40; n += 1) expect(await log.claim("s1", n, [`/ws/old-${n}.sh`])).toBe(true);
    const files = await opened(log, "s1", SILENT);
    expect(files.size).toBe(40);
    await files.written();
    const { space: watched, seen } = counting(space);
    expect((await opened(new DownloadLog(watched), "s1", SILENT)).size).toBe(40);
    expect(seen.roundTrips).toBe(2);
    await store.close();
  });

  it("a snapshot that cannot be written is logged; the files are in their pages and the save goes on", async () => {
    const store = await openStore(tempDir());
    const space = store.space("sessions");
    const failing: KeyValueSpace = {
      getMany: (keys) => getAll(space, keys),
      get: (key) => space.get(key),
      set: (key, value, ttl) => space.set(key, value, ttl),
      delete: (key) => space.delete(key),
      setIfAbsent: async (key, value, ttl) => {
        if (key.startsWith("dlsnap:")) throw new Error("store full");
        return space.setIfAbsent(key, value, ttl);
      },
      replaceIf: (key, expected, value, ttlMs) => space.replaceIf(key, expected, value, ttlMs),
      deleteIf: (key, expected) => space.deleteIf(key, expected),
    };
    const lines: Array<{ msg?: string; pages?: number }> = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    await downloadOneByOne(DownloadedFiles.fresh(new DownloadLog(failing), "s1", logger), 17);
    expect(lines[0]).toMatchObject({
      msg: expect.stringMatching(/^compacting the downloaded-files log failed/),
      pages: 16,
    });
    expect(await space.get(downloadHeadKey("s1"))).toBeUndefined();
    expect((await opened(new DownloadLog(space), "s1", SILENT)).size).toBe(17);
    await store.close();
  });
});
