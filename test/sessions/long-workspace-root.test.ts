/**
 * A workspace whose root is too long for its record's keys (download-log.ts): the store takes keys
 * of at most MAX_KEY_LENGTH characters on every backend, and a log's keys held its id, the
 * workspace's resolved root, so with a root of some 190 characters or more every read of the
 * record threw, and with it the first message of every conversation (no session could be created
 * or loaded). A root of 300 characters now has its record — written, compacted, read back, on the
 * memory, SQLite and Redis stores, and heeded by the rule that asks before a downloaded file runs,
 * after a restart too — through WorkspaceDownloads and through the service's session stack; and a
 * key that fits is the key builds before wrote, so a stored record reads as it is.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import {
  DOWNLOAD_PAGES_PER_SNAPSHOT,
  DownloadLog,
  downloadFoldedKey,
  downloadHeadKey,
  downloadPageKey,
  downloadSnapshotKey,
} from "../../src/sessions/download-log.js";
import { WorkspaceDownloads, workspaceDownloadLogId } from "../../src/sessions/workspace-downloads.js";
import { createStore } from "../../src/store/create-store.js";
import { MAX_KEY_LENGTH } from "../../src/store/keyv-space.js";
import { getAll, type KeyValueSpace } from "../../src/store/store.js";
import { toVersioned } from "../../src/store/versioned.js";
import { spaceLike } from "../support/space-like.js";
import { type ScriptedStep, textStep, toolStep } from "../support/scripted-provider.js";
import { asksOrEnds, DownloadingProcesses, inAutoMode } from "./helpers/downloading-processes.js";
import { openStore, tempDir, thread } from "./helpers/harness.js";
import { redisPerFile } from "./helpers/redis-per-file.js";

const SILENT = pino({ level: "silent" });
// A DM: its owner (Ana) may put the session in auto mode, where only the download rule still asks.
const HOME = thread("1700000000.000100", "DHOME");
/** Another thread of the same DM: its own session, on the same workspace. */
const OTHER = thread("1700000000.000200", "DHOME");

/** A folder under a fresh temporary one whose absolute path is `length` characters long (made on disk). */
function rootOfLength(length: number): string {
  const base = tempDir();
  const segments: string[] = [];
  let at = base.length;
  while (at < length) {
    // Each segment (with its slash) at most 101 characters: a file name may have 255.
    const take = Math.min(100, length - at - 1);
    segments.push("w".repeat(take));
    at += take + 1;
  }
  const root = path.join(base, ...segments);
  expect(root).toHaveLength(length);
  mkdirSync(root, { recursive: true });
  return root;
}

/** `space` noting the key of every read and write in `keys`. */
function keysNoted(space: KeyValueSpace, keys: string[]): KeyValueSpace {
  return spaceLike(space, {
    get: (key) => {
      keys.push(key);
      return space.get(key);
    },
    getMany: (many) => {
      keys.push(...many);
      return getAll(space, many);
    },
    set: (key, value, ttl) => {
      keys.push(key);
      return space.set(key, value, ttl);
    },
    setIfAbsent: (key, value, ttl) => {
      keys.push(key);
      return space.setIfAbsent(key, value, ttl);
    },
    delete: (key) => {
      keys.push(key);
      return space.delete(key);
    },
  });
}

describe("a workspace root too long for its record's keys", () => {
  const redis = redisPerFile();
  const stores = {
    memory: () => openStore(),
    SQLite: () => openStore(tempDir()),
    Redis: () => createStore({ url: redis.url, dataDir: tempDir() }),
  };
  for (const [backend, open] of Object.entries(stores)) {
    it(`keeps its record on the ${backend} store: written page by page, compacted, read back whole`, async () => {
      const root = rootOfLength(300);
      const store = await open();
      const keys: string[] = [];
      const space = keysNoted(store.space("sessions"), keys);
      const files = await new WorkspaceDownloads(new DownloadLog(space), root, SILENT).current();
      // One page per file, past a snapshot: every kind of key the log has.
      const count = DOWNLOAD_PAGES_PER_SNAPSHOT + 2;
      const written = Array.from({ length: count }, (_, i) => path.join(root, `f-${i}.sh`));
      for (const file of written) {
        files.add(file);
        await files.written();
      }
      const logId = workspaceDownloadLogId(root);
      const read = await new DownloadLog(space).read(logId);
      expect(read.snapshot).toBe(DOWNLOAD_PAGES_PER_SNAPSHOT);
      expect(read.next).toBe(count);

      const again = await new WorkspaceDownloads(new DownloadLog(space), root, SILENT).current();
      expect([...again].sort()).toEqual([...written].sort());
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) expect(key.length).toBeLessThanOrEqual(MAX_KEY_LENGTH);
      await store.close();
    });
  }

  it("folds a session's own record into it", async () => {
    const root = rootOfLength(300);
    const store = await openStore();
    const space = store.space("sessions");
    await space.set(downloadPageKey("s1", 0), toVersioned("downloaded-files", { files: ["/old/a.sh"] }));
    const files = await new WorkspaceDownloads(new DownloadLog(space), root, SILENT).forStoredSession("s1");
    expect([...files]).toEqual(["/old/a.sh"]);
    expect(await space.get(downloadFoldedKey("s1"))).toMatchObject({
      data: { into: workspaceDownloadLogId(root), next: 1 },
    });
    const again = await new WorkspaceDownloads(new DownloadLog(space), root, SILENT).current();
    expect([...again]).toEqual(["/old/a.sh"]);
    await store.close();
  });
});

describe("the keys of a download log", () => {
  it("are the keys builds before wrote while they fit: `<kind>:<log id>[:<n>]`", async () => {
    const logId = workspaceDownloadLogId("/srv/coworker/workspace");
    expect(logId).toBe("ws:/srv/coworker/workspace");
    expect(downloadPageKey(logId, 3)).toBe("dl:ws:/srv/coworker/workspace:3");
    expect(downloadSnapshotKey(logId, 16)).toBe("dlsnap:ws:/srv/coworker/workspace:16");
    expect(downloadHeadKey(logId)).toBe("dlhead:ws:/srv/coworker/workspace");
    expect(downloadFoldedKey("s1")).toBe("dlfolded:s1");
    // A key exactly as long as the store takes is still the plain one.
    const fitting = `ws:/${"r".repeat(MAX_KEY_LENGTH - "dl:ws:/:0".length)}`;
    expect(downloadPageKey(fitting, 0)).toBe(`dl:${fitting}:0`);
    expect(downloadPageKey(fitting, 0)).toHaveLength(MAX_KEY_LENGTH);

    // A record stored under them by an earlier build is read as it is.
    const store = await openStore();
    const space = store.space("sessions");
    await space.set(downloadPageKey(fitting, 0), toVersioned("downloaded-files", { files: ["/r/a.sh"] }));
    expect((await new DownloadLog(space).read(fitting)).files).toEqual(["/r/a.sh"]);
    await store.close();
  });

  it("name a log by its id's digest where the plain key would be too long: one key per log and page, never a plain one", () => {
    const long = `ws:/${"r".repeat(MAX_KEY_LENGTH)}`;
    const other = `ws:/${"r".repeat(MAX_KEY_LENGTH - 1)}s`;
    const keys = [
      downloadPageKey(long, 0),
      downloadPageKey(long, 12_345),
      downloadSnapshotKey(long, 16),
      downloadHeadKey(long),
      downloadFoldedKey(long),
    ];
    for (const key of keys) {
      expect(key.length).toBeLessThanOrEqual(MAX_KEY_LENGTH);
      expect(key).toMatch(/^(dl|dlsnap|dlhead|dlfolded)#[0-9a-f]{64}(:\d+)?$/);
    }
    expect(new Set(keys).size).toBe(keys.length);
    expect(downloadPageKey(long, 0)).toBe(downloadPageKey(long, 0));
    expect(downloadPageKey(other, 0)).not.toBe(downloadPageKey(long, 0));
    // Past the limit one page at a time: a log whose early pages fit keeps their plain keys.
    const edge = `ws:/${"r".repeat(MAX_KEY_LENGTH - "dl:ws:/:9".length)}`;
    expect(downloadPageKey(edge, 9)).toBe(`dl:${edge}:9`);
    expect(downloadPageKey(edge, 10)).toMatch(/^dl#[0-9a-f]{64}:10$/);
  });
});

const processes = new DownloadingProcesses();
afterEach(() => processes.stopAll());

/** Start a process on the SQLite store in `dataDir`, working in `root`. */
const start = (dataDir: string, root: string, steps: readonly ScriptedStep[]) =>
  processes.start(dataDir, { steps, downloadRoot: root, workspaceRoot: root });

describe("the service on a workspace root of 300 characters", () => {
  it("records a download, and running it asks a person, also after a restart", async () => {
    const dataDir = tempDir();
    const root = rootOfLength(300);
    const first = await start(dataDir, root, [
      textStep("hi"),
      toolStep(["c1", "shell", { command: "curl --output dl/a.sh https://example.com/a" }]),
      textStep("fetched"),
      toolStep(["c2", "shell", { command: "sh dl/a.sh" }]),
    ]);
    await inAutoMode(first, HOME);
    expect(await asksOrEnds(first, "fetch it", HOME)).toBe("ended");
    expect(await asksOrEnds(first, "run it", HOME)).toBe("asked");
    expect(first.ran).toEqual(["curl --output dl/a.sh https://example.com/a"]);
    await processes.stop(first);

    // After a restart, a new session of another thread on the workspace reads the record from the store.
    const second = await start(dataDir, root, [
      textStep("hi"),
      toolStep(["c3", "shell", { command: "bash dl/a.sh" }]),
    ]);
    await inAutoMode(second, OTHER);
    expect(await asksOrEnds(second, "run it again", OTHER)).toBe("asked");
    expect(second.ran).toEqual([]);
  });
});
