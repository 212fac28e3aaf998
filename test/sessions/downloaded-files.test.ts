/**
 * A session's downloaded files live in their own log, not in its record: one command that
 * downloads 1,000 files (the most one records unasked) leaves the record (rewritten by every later save) small, and a command
 * that runs one of them still waits for a person after a restart — also for a session stored
 * with the list its record once held. Real SessionManager and engines on one SQLite file; the
 * model is scripted, and its shell tool records downloads as run_command does (recordDownloads).
 */
import path from "node:path";
import pino, { type Logger } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { sessionKeyOf } from "../../src/core/thread-target.js";
import { SESSION_RECORD_KIND } from "../../src/sessions/session-record.js";
import { SessionRecords } from "../../src/sessions/session-records.js";
import { toVersioned } from "../../src/store/versioned.js";
import { workspaceDownloadLogId } from "../../src/sessions/workspace-downloads.js";
import { type ScriptedStep, textStep, toolStep } from "../support/scripted-provider.js";
import {
  asksOrEnds,
  type DownloadingProcess,
  DownloadingProcesses,
  inAutoMode,
} from "./helpers/downloading-processes.js";
import { ANA, openStore, sessionRecord, tempDir, thread } from "./helpers/harness.js";

// A DM: its owner (Ana) may put the session in auto mode, where only the download rule still asks.
const HOME = thread("1700000000.000100", "DHOME");
/** Another thread of the same DM: its own session, on the same workspace. */
const OTHER = thread("1700000000.000200", "DHOME");
const FILES = 1_000;
const CURL = `curl ${Array.from({ length: FILES }, (_, i) => `--output dl/file-${i}.bin`).join(" ")} https://example.com/x`;

const processes = new DownloadingProcesses();
afterEach(() => processes.stopAll());

/** Start a process on the SQLite store in `dataDir`; its shell records downloads under ws/. */
const start = (dataDir: string, steps: readonly ScriptedStep[], logger?: Logger) =>
  processes.start(dataDir, { steps, downloadRoot: path.join(dataDir, "ws"), logger });
const stop = (process: DownloadingProcess) => processes.stop(process);

describe("downloaded files, kept out of the session record", () => {
  it("one command downloading 1,000 files leaves the record small, and running one still asks after a restart", async () => {
    const dataDir = tempDir();
    const first = await start(dataDir, [
      textStep("hi"),
      toolStep(["c1", "shell", { command: CURL }]),
      textStep("fetched"),
    ]);
    await inAutoMode(first, HOME);
    expect(await asksOrEnds(first, "fetch them", HOME)).toBe("ended");
    expect(first.ran).toEqual([CURL]);
    await stop(first);

    const reopened = await openStore(dataDir);
    const records = new SessionRecords(reopened.space("sessions"));
    const id = (await records.currentId(sessionKeyOf(HOME))) as string;
    const stored = await reopened.space("sessions").get(`rec:${id}`);
    // Before, the record carried all 1,000 paths (≈ 30 KB) and every save rewrote them.
    expect(JSON.stringify(stored).length).toBeLessThan(5_000);
    expect((await records.downloads.read(workspaceDownloadLogId(dataDir))).files).toHaveLength(FILES);
    await reopened.close();

    const second = await start(dataDir, [toolStep(["c2", "shell", { command: "sh dl/file-432.bin" }])]);
    expect(await asksOrEnds(second, "run file 432", HOME)).toBe("asked");
    expect(second.ran).toEqual([]);
  });

  it("a page of the log that does not read back is logged through the app's logger, its files still asked about", async () => {
    const dataDir = tempDir();
    const first = await start(dataDir, [
      textStep("hi"),
      toolStep(["c1", "shell", { command: "curl --output dl/a.sh https://example.com/a" }]),
      textStep("fetched"),
    ]);
    await inAutoMode(first, HOME);
    expect(await asksOrEnds(first, "fetch it", HOME)).toBe("ended");
    await stop(first);

    const store = await openStore(dataDir);
    const key = `dl:${workspaceDownloadLogId(dataDir)}:0`;
    const page = (await store.space("sessions").get(key)) as { data: { files: unknown[] } };
    await store.space("sessions").set(key, { ...page, data: { files: [...page.data.files, 7] } });
    await store.close();

    const lines: Array<{ msg?: string }> = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const second = await start(dataDir, [toolStep(["c2", "shell", { command: "sh dl/a.sh" }])], logger);
    expect(await asksOrEnds(second, "run it", HOME)).toBe("asked");
    expect(lines.map((line) => line.msg)).toContainEqual(expect.stringMatching(/page 0\) is corrupt/));
  });

  it("a session stored with the list its record once held still asks, and its save moves the list to the log", async () => {
    const dataDir = tempDir();
    const store = await openStore(dataDir);
    const base = sessionRecord("legacy1", {
      key: sessionKeyOf(HOME),
      target: HOME,
      mode: "auto",
      startedBy: ANA,
    });
    const legacy = { ...base, downloadedFiles: [path.join(dataDir, "ws", "setup.sh")] };
    await store.space("sessions").set("rec:legacy1", toVersioned(SESSION_RECORD_KIND, legacy));
    await store.space("sessions").set(`key:${sessionKeyOf(HOME)}`, "legacy1");
    await store.close();

    const first = await start(dataDir, [toolStep(["c1", "shell", { command: "bash ./setup.sh" }])]);
    expect(await asksOrEnds(first, "run setup", HOME)).toBe("asked");
    expect(first.ran).toEqual([]);
    await first.manager.drain(0);
    const records = new SessionRecords(first.store.space("sessions"));
    expect(await records.get("legacy1")).not.toHaveProperty("downloadedFiles");
    expect((await records.downloads.read(workspaceDownloadLogId(dataDir))).files).toEqual([
      path.join(dataDir, "ws", "setup.sh"),
    ]);
  });

  it("a file downloaded in one session still asks in the thread's next session after new, also after a restart", async () => {
    const dataDir = tempDir();
    const first = await start(dataDir, [
      textStep("hi"),
      toolStep(["c1", "shell", { command: "curl --output dl/a.sh https://example.com/a" }]),
      textStep("fetched"),
      toolStep(["c2", "shell", { command: "sh dl/a.sh" }]),
    ]);
    await inAutoMode(first, HOME);
    expect(await asksOrEnds(first, "fetch it", HOME)).toBe("ended");
    const before = await new SessionRecords(first.store.space("sessions")).currentId(sessionKeyOf(HOME));
    await first.manager.command(HOME, ANA, "new", []);
    const after = await new SessionRecords(first.store.space("sessions")).currentId(sessionKeyOf(HOME));
    expect(after).not.toBe(before);
    await first.manager.command(HOME, ANA, "mode", ["auto"]);
    expect(await asksOrEnds(first, "run it", HOME)).toBe("asked");
    expect(first.ran).toEqual(["curl --output dl/a.sh https://example.com/a"]);
    await stop(first);

    // After a restart, a new session of another thread on the workspace reads its record from the store.
    const second = await start(dataDir, [
      textStep("hi"),
      toolStep(["c4", "shell", { command: "echo fine" }]),
      textStep("ran"),
      toolStep(["c5", "shell", { command: "bash dl/a.sh" }]),
    ]);
    await inAutoMode(second, OTHER);
    expect(await asksOrEnds(second, "something harmless", OTHER)).toBe("ended");
    expect(await asksOrEnds(second, "run it", OTHER)).toBe("asked");
    expect(second.ran).toEqual(["echo fine"]);
  });
});
