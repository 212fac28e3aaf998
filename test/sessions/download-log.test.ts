/**
 * A live session's downloaded files and their log (download-log.ts, downloaded-files.ts,
 * workspace-downloads.ts) on a real SQLite store: a file is stored as it is recorded, not when the
 * turn ends, so a process killed mid-turn loses none; a bad page (of a session's own log, from
 * before the log moved to the workspace) is logged and read on the safe side; two writers of one
 * log (two processes) keep each other's files; a write that fails holds back the record save until
 * it is retried; a reload takes in what another process recorded; every session on a workspace
 * sees what another downloaded there, and a session on another workspace does not; a session's
 * own log, once folded into the workspace's and marked so, is not read again — and a process
 * stopped before the mark folds it again, losing nothing.
 */
import path from "node:path";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { DownloadLog, downloadFoldedKey, downloadPageKey } from "../../src/sessions/download-log.js";
import { InboundDedupe } from "../../src/sessions/inbound-dedupe.js";
import type { HeldSession } from "../../src/sessions/lease-lock.js";
import { LeaseGate, type LeaseGateOptions } from "../../src/sessions/lease-gate.js";
import { LiveSession, type LiveSessionStores } from "../../src/sessions/live-session.js";
import { SessionRecords } from "../../src/sessions/session-records.js";
import { HistoryLog } from "../../src/store/history-log.js";
import { getAll, type KeyValueSpace, type Store } from "../../src/store/store.js";
import { toVersioned } from "../../src/store/versioned.js";
import { recordDownloads } from "../../src/tools/shell/downloads.js";
import { WorkspaceDownloads, workspaceDownloadLogId } from "../../src/sessions/workspace-downloads.js";
import { spaceLike } from "../support/space-like.js";
import { guardWrites } from "./helpers/guarded-space.js";
import { openStore, sessionRecord, tempDir, thread } from "./helpers/harness.js";

/** The stores a LiveSession takes, over `store` (its sessions space replaced by `sessions` when given). */
function storesOf(
  store: Store,
  options: { sessions?: KeyValueSpace; lines?: unknown[]; workspace?: string } = {},
): LiveSessionStores {
  const lines = options.lines;
  const records = new SessionRecords(options.sessions ?? store.space("sessions"));
  const logger = lines
    ? pino({ level: "error" }, { write: (line: string) => lines.push(JSON.parse(line)) })
    : SILENT;
  return {
    records,
    downloads: new WorkspaceDownloads(records.downloads, options.workspace ?? WS, logger),
    history: new HistoryLog(store.space("history")),
    journal: store.space("journal"),
    dedupe: new InboundDedupe(store),
    now: () => new Date("2026-12-03T10:00:00.000Z"),
    writesInOrder: store.writesInOrder,
    logger,
  };
}

/**
 * `space` noting each read (the keys of one get or getMany call) in `reads`, whose writes of a key
 * `failing` names throw (a store down, or a process killed before it wrote them).
 */
function watched(space: KeyValueSpace, failing: (key: string) => boolean = () => false) {
  const reads: string[][] = [];
  const write = <T>(key: string, op: () => Promise<T>): Promise<T> =>
    failing(key) ? Promise.reject(new Error(`store down writing ${key}`)) : op();
  const wrapped = spaceLike(space, {
    get: (key) => {
      reads.push([key]);
      return space.get(key);
    },
    getMany: (keys) => {
      reads.push([...keys]);
      return getAll(space, keys);
    },
    set: (key, value, ttl) => write(key, () => space.set(key, value, ttl)),
    setIfAbsent: (key, value, ttl) => write(key, () => space.setIfAbsent(key, value, ttl)),
  });
  return { space: wrapped, reads };
}

/** Write a session's own log (as builds before the workspace's record did): one page per list of files. */
async function ownLog(space: KeyValueSpace, sessionId: string, pages: readonly string[][]): Promise<void> {
  for (const [i, files] of pages.entries())
    await space.set(downloadPageKey(sessionId, i), toVersioned("downloaded-files", { files }));
}

const SILENT = pino({ level: "silent" });
const RECORD = sessionRecord("s1", { key: "k1", target: thread() });
/** The workspace root the sessions work in, unless a test names another. */
const WS = "/srv/coworker/workspace";
const WS_LOG = workspaceDownloadLogId(WS);

describe("a session's downloaded files", () => {
  it("a file downloaded in a turn that never ended (the process killed) is still known after a restart", async () => {
    const dataDir = tempDir();
    const ws = path.join(dataDir, "ws");
    const first = await openStore(dataDir);
    const live = LiveSession.create(RECORD, storesOf(first));
    await live.update((r) => ({ ...r, title: "a turn in progress" }));
    await recordDownloads("curl -o get.sh https://example.com/get.sh", ws, live.facts);
    await live.flush();
    // Killed here: the turn's end is never saved.
    await first.close();

    const second = await openStore(dataDir);
    const stores = storesOf(second);
    const reopened = await LiveSession.load((await stores.records.get("s1"))!, stores);
    expect(reopened.facts.downloadedFiles.has(path.join(ws, "get.sh"))).toBe(true);
    await second.close();
  });

  it("logs a page of a session's own log that does not validate and takes every string in it as downloaded; the pages after it still count, and join the workspace's", async () => {
    const store = await openStore(tempDir());
    const space = store.space("sessions");
    const page = (files: unknown) => toVersioned("downloaded-files", { files });
    await space.set(downloadPageKey("s1", 0), page(["/ws/a.sh"]));
    await space.set(downloadPageKey("s1", 1), page([7, "/ws/evil.sh"]));
    await space.set(downloadPageKey("s1", 2), {
      v: 9,
      kind: "downloaded-files",
      data: { files: ["/ws/new.sh"] },
    });
    await space.set(downloadPageKey("s1", 3), page(["/ws/d.sh"]));
    const lines: Array<{ msg?: string }> = [];
    const live = await LiveSession.load(RECORD, storesOf(store, { lines }));
    expect([...live.facts.downloadedFiles].sort()).toEqual(
      ["/ws/a.sh", "/ws/d.sh", "/ws/evil.sh", "/ws/new.sh", "downloaded-files"].sort(),
    );
    expect(lines.map((line) => line.msg)).toEqual([
      expect.stringMatching(
        /page 1\) is corrupt: files\.0: .*; its 2 strings are all taken as downloaded files/,
      ),
      expect.stringMatching(/page 2\) was written by a newer Coworker/),
    ]);
    live.facts.downloadedFiles.add("/ws/e.sh");
    await live.flush();
    expect(await space.get(downloadPageKey("s1", 4))).toBeUndefined();
    expect(new Set((await new DownloadLog(space).read(WS_LOG)).files)).toEqual(
      new Set([...live.facts.downloadedFiles]),
    );
    await store.close();
  });

  it("a session's own log, once folded into the workspace's, is not read again: a load reads its mark, in the round trip that tells a log is empty", async () => {
    const store = await openStore(tempDir());
    const space = store.space("sessions");
    await ownLog(space, "s1", [["/ws/a.sh"], ["/ws/b.sh"], ["/ws/c.sh"]]);
    const first = await LiveSession.load(RECORD, storesOf(store));
    expect([...first.facts.downloadedFiles].sort()).toEqual(["/ws/a.sh", "/ws/b.sh", "/ws/c.sh"]);
    expect(await space.get(downloadFoldedKey("s1"))).toMatchObject({ data: { into: WS_LOG, next: 3 } });

    // Another process (or this one after a restart) loads the session again: the mark, and the
    // page after those folded (none: nothing was appended since).
    const { space: sessions, reads } = watched(space);
    const again = await LiveSession.load(RECORD, storesOf(store, { sessions }));
    expect([...again.facts.downloadedFiles].sort()).toEqual(["/ws/a.sh", "/ws/b.sh", "/ws/c.sh"]);
    const ofOwnLog = reads.filter((keys) => keys.some((key) => key.includes(":s1")));
    expect(ofOwnLog).toEqual([
      [downloadFoldedKey("s1"), "dlhead:s1", downloadPageKey("s1", 0)],
      [downloadPageKey("s1", 3)],
    ]);
    await store.close();
  });

  it("a page a build before the move appends to a session's own log after its fold (a rolling deploy) is folded at the next load, not lost behind the mark", async () => {
    const store = await openStore(tempDir());
    const space = store.space("sessions");
    await ownLog(space, "s1", [["/ws/a.sh"]]);
    await LiveSession.load(RECORD, storesOf(store));
    expect(await space.get(downloadFoldedKey("s1"))).toMatchObject({ data: { into: WS_LOG, next: 1 } });

    // The old build runs a turn of the session and records a download in the session's own log.
    await ownLog(space, "s1", [["/ws/a.sh"], ["/ws/evil.sh"]]);
    const again = await LiveSession.load(RECORD, storesOf(store));
    expect(again.facts.downloadedFiles.has("/ws/evil.sh")).toBe(true);
    expect((await new DownloadLog(space).read(WS_LOG)).files).toContain("/ws/evil.sh");
    expect(await space.get(downloadFoldedKey("s1"))).toMatchObject({ data: { into: WS_LOG, next: 2 } });
    await store.close();
  });

  it("a process that stops before the fold's mark is written (or before the workspace's record holds the files) folds the old log again at the next load, losing no file", async () => {
    const store = await openStore(tempDir());
    const space = store.space("sessions");
    await ownLog(space, "s1", [["/ws/a.sh"], ["/ws/b.sh"]]);
    // The workspace's record cannot be written: the files are known, and no mark is written.
    const down = watched(space, (key) => key.startsWith("dl"));
    const first = await LiveSession.load(RECORD, storesOf(store, { sessions: down.space }));
    expect(first.facts.downloadedFiles.has("/ws/b.sh")).toBe(true);
    expect(await space.get(downloadFoldedKey("s1"))).toBeUndefined();
    expect((await new DownloadLog(space).read(WS_LOG)).files).toEqual([]);

    // The files reach the workspace's record, the mark does not (killed between the two).
    const noMark = watched(space, (key) => key === downloadFoldedKey("s1"));
    await LiveSession.load(RECORD, storesOf(store, { sessions: noMark.space }));
    expect([...(await new DownloadLog(space).read(WS_LOG)).files].sort()).toEqual(["/ws/a.sh", "/ws/b.sh"]);
    expect(await space.get(downloadFoldedKey("s1"))).toBeUndefined();

    // The next load reads the old log again (every page), and marks it.
    const next = watched(space);
    const third = await LiveSession.load(RECORD, storesOf(store, { sessions: next.space }));
    expect(next.reads.flat()).toContain(downloadPageKey("s1", 1));
    expect([...third.facts.downloadedFiles].sort()).toEqual(["/ws/a.sh", "/ws/b.sh"]);
    expect(await space.get(downloadFoldedKey("s1"))).toMatchObject({ data: { into: WS_LOG } });
    await store.close();
  });

  it("an old log folded into one workspace's record is folded again into another's (the workspace root changed)", async () => {
    const store = await openStore(tempDir());
    const space = store.space("sessions");
    await ownLog(space, "s1", [["/ws/a.sh"]]);
    await LiveSession.load(RECORD, storesOf(store));
    const moved = await LiveSession.load(RECORD, storesOf(store, { workspace: "/srv/moved/workspace" }));
    expect(moved.facts.downloadedFiles.has("/ws/a.sh")).toBe(true);
    const movedLog = workspaceDownloadLogId("/srv/moved/workspace");
    expect((await new DownloadLog(space).read(movedLog)).files).toEqual(["/ws/a.sh"]);
    expect(await space.get(downloadFoldedKey("s1"))).toMatchObject({ data: { into: movedLog } });
    await store.close();
  });

  it("a fold mark that does not validate is logged, and the old log read again (then marked anew)", async () => {
    const store = await openStore(tempDir());
    const space = store.space("sessions");
    await ownLog(space, "s1", [["/ws/a.sh"]]);
    await space.set(downloadFoldedKey("s1"), toVersioned("downloaded-files-folded", { into: 7, next: 1 }));
    const lines: Array<{ msg?: string }> = [];
    const live = await LiveSession.load(RECORD, storesOf(store, { lines }));
    expect(live.facts.downloadedFiles.has("/ws/a.sh")).toBe(true);
    expect(lines.map((line) => line.msg)).toEqual([
      expect.stringMatching(/is corrupt.*the log is read again/),
    ]);
    expect(await space.get(downloadFoldedKey("s1"))).toMatchObject({ data: { into: WS_LOG } });
    await store.close();
  });

  it("a session with no log of its own (every session since the move) costs one round trip and gets no mark", async () => {
    const store = await openStore(tempDir());
    const space = store.space("sessions");
    const { space: sessions, reads } = watched(space);
    await LiveSession.load(RECORD, storesOf(store, { sessions }));
    expect(reads.filter((keys) => keys.some((key) => key.includes(":s1")))).toHaveLength(1);
    expect(await space.get(downloadFoldedKey("s1"))).toBeUndefined();
    await store.close();
  });

  it("two writers of one log keep each other's files, each page written once", async () => {
    const store = await openStore(tempDir());
    const log = new DownloadLog(store.space("sessions"));
    const [a, b] = await Promise.all([
      new WorkspaceDownloads(log, "/s1", SILENT).forStoredSession("s1"),
      new WorkspaceDownloads(log, "/s1", SILENT).forStoredSession("s1"),
    ]);
    a.add("/ws/from-a.sh");
    b.add("/ws/from-b.sh");
    await Promise.all([a.written(), b.written()]);
    b.add("/ws/b-again.sh");
    await b.written();
    expect(await log.read(workspaceDownloadLogId("/s1"))).toEqual({
      files: expect.arrayContaining(["/ws/from-a.sh", "/ws/from-b.sh", "/ws/b-again.sh"]),
      next: 3,
      snapshot: 0,
      problems: [],
    });
    // The writer that lost the race for a page read the winner's files on its way to the next one.
    expect(a.has("/ws/from-b.sh") || b.has("/ws/from-a.sh")).toBe(true);
    await store.close();
  });

  it("a write that fails holds back the record save, which fails too; the next save writes the file first", async () => {
    const store = await openStore(tempDir());
    let failing = true;
    const sessions = guardWrites(store.space("sessions"), () => {
      if (failing) throw new Error("store down");
    });
    const lines: unknown[] = [];
    const stores = storesOf(store, { sessions, lines });
    const live = LiveSession.create(RECORD, stores);
    live.facts.downloadedFiles.add("/ws/get.sh");
    await expect(live.update((r) => ({ ...r, title: "after the download" }))).rejects.toThrow("store down");
    expect(await stores.records.get("s1")).toBeUndefined();
    failing = false;
    await live.update((r) => ({ ...r, title: "store back" }));
    expect((await stores.records.downloads.read(WS_LOG)).files).toEqual(["/ws/get.sh"]);
    expect(await stores.records.get("s1")).toMatchObject({ title: "store back" });
    expect(lines).toContainEqual(expect.objectContaining({ logId: WS_LOG, pending: 1 }));
    await store.close();
  });

  it("a file one session downloaded is known to every session on the workspace, and to none on another", async () => {
    const store = await openStore(tempDir());
    const stores = storesOf(store);
    const a = LiveSession.create(RECORD, stores);
    await recordDownloads("curl -o get.sh https://example.com/get.sh", WS, a.facts);
    // "new": the thread's next session, on the same workspace (the cache awaits `current()` first).
    await stores.downloads.current();
    const b = LiveSession.create(sessionRecord("s2", { key: "k1", target: thread() }), stores);
    expect(b.facts.downloadedFiles.has(path.join(WS, "get.sh"))).toBe(true);
    await a.flush();
    // Another process on the same store and workspace, loading a session that downloaded nothing.
    const elsewhere = storesOf(store);
    const c = await LiveSession.load(sessionRecord("s3", { key: "k2", target: thread("2.2") }), elsewhere);
    expect(c.facts.downloadedFiles.has(path.join(WS, "get.sh"))).toBe(true);
    // A session on another workspace, on the same store.
    const other = storesOf(store, { workspace: "/srv/other/workspace" });
    const d = await LiveSession.load(sessionRecord("s4", { key: "k3", target: thread("3.3") }), other);
    expect(d.facts.downloadedFiles.size).toBe(0);
    await store.close();
  });

  it("a process taking a session's lease takes in what another process's session downloaded into the workspace", async () => {
    const store = await openStore(tempDir());
    const here = storesOf(store);
    await here.downloads.current();
    const live = LiveSession.create(RECORD, here);
    const there = storesOf(store);
    const other = await LiveSession.load(sessionRecord("s2", { key: "k2", target: thread("2.2") }), there);
    await recordDownloads("curl -o get.sh https://example.com/get.sh", WS, other.facts);
    await other.flush();
    expect(live.facts.downloadedFiles.has(path.join(WS, "get.sh"))).toBe(false);
    // This process held the session last (its copy is current): only the workspace's files are read.
    const gate = new LeaseGate({
      leases: { mayBeStale: () => false },
      logger: SILENT,
    } as unknown as LeaseGateOptions);
    await gate.refresh(live, { sessionId: "s1" } as HeldSession);
    expect(live.facts.downloadedFiles.has(path.join(WS, "get.sh"))).toBe(true);
    await store.close();
  });

  it("a reload takes in the files another process recorded for the session meanwhile", async () => {
    const store = await openStore(tempDir());
    await new SessionRecords(store.space("sessions")).put(RECORD);
    const here = await LiveSession.load(RECORD, storesOf(store));
    const there = await LiveSession.load(RECORD, storesOf(store));
    there.facts.downloadedFiles.add("/ws/there.sh");
    await there.update((r) => ({ ...r, turns: 1 }));
    expect(await here.reload()).toBe(true);
    expect(here.facts.downloadedFiles.has("/ws/there.sh")).toBe(true);
    await store.close();
  });
});
