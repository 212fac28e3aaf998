/**
 * A workspace's record of downloaded files is bounded, and fails closed (downloaded-files.ts): a
 * model that downloads without end fills it to its cap, then it is marked full — the mark stored
 * in the log, nothing appended after it — and from then on every shell command asks a person,
 * also one naming no file ever downloaded, also decided with a step's copy of the set; the mark is
 * read back after a restart; and two processes on one redis-server racing past the cap both end
 * full, with neither's file lost (it is in the log, or the mark stands for it). The cap is the
 * service's own (MAX_DOWNLOADED_FILES): each test starts from a record stored near it (`stored`).
 */
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { defineTool, ok } from "../../src/core/tool.js";
import {
  DOWNLOAD_RECORD_FULL,
  MAX_DOWNLOADED_FILES,
} from "../../src/engine/permissions/download-execution.js";
import { GrantSet } from "../../src/engine/permissions/grants.js";
import { PermissionEngine } from "../../src/engine/permissions/permission-engine.js";
import { stepDownloadedFiles } from "../../src/engine/permissions/step-downloads.js";
import { DownloadLog, downloadPageKey } from "../../src/sessions/download-log.js";
import { WorkspaceDownloads, workspaceDownloadLogId } from "../../src/sessions/workspace-downloads.js";
import { createStore } from "../../src/store/create-store.js";
import type { KeyValueSpace } from "../../src/store/store.js";
import { recordDownloads } from "../../src/tools/shell/downloads.js";
import { openStore, tempDir } from "./helpers/harness.js";
import { redisPerFile } from "./helpers/redis-per-file.js";

const SILENT = pino({ level: "silent" });
const CAP = MAX_DOWNLOADED_FILES;

const shell = defineTool({
  name: "run_command",
  description: "run a shell command (test)",
  inputSchema: z.object({ command: z.string() }),
  category: "exec",
  risk: "high",
  grantKey: "command",
  concurrent: false,
  execute: async () => ok("done"),
});

/** How the permission engine decides `command` in auto mode, over a grant of the whole tool. */
function decided(command: string, downloaded: ReadonlySet<string>) {
  return new PermissionEngine({ allowedCommandPrefixes: [], hardDenyPatterns: [] }).decide(
    shell,
    { command },
    {
      mode: "auto",
      grants: new GrantSet([{ kind: "tool", tool: "run_command" }]),
      facts: { downloadedFiles: downloaded },
      provenance: { kind: "user" },
    },
  );
}

/** A curl line saving `count` files under dl/ (named `prefix-<n>.sh`). */
function curlOf(count: number, prefix = "f"): string {
  const outputs = Array.from({ length: count }, (_, i) => `--output dl/${prefix}-${i}.sh`);
  return `curl ${outputs.join(" ")} https://x.test/x`;
}

/**
 * Store `count` files (named `root/old/<n>.sh`) as page 0 of the workspace `root`'s record, as
 * earlier downloads did; with more than the cap, as a writer with a larger one (another build)
 * or several racing past it would have.
 */
async function stored(space: KeyValueSpace, root: string, count: number): Promise<void> {
  const files = Array.from({ length: count }, (_, i) => path.join(root, "old", `${i}.sh`));
  expect(await new DownloadLog(space).claim(workspaceDownloadLogId(root), 0, files)).toBe(true);
}

/** The stored page `index` of the workspace `root`'s record (its files), undefined when none. */
async function page(space: KeyValueSpace, root: string, index: number): Promise<string[] | undefined> {
  const raw = await space.get<{ data: { files: string[] } }>(
    downloadPageKey(workspaceDownloadLogId(root), index),
  );
  return raw?.data.files;
}

describe("a workspace's record of downloaded files, at its cap", () => {
  it("stops growing past the cap and is marked full: then every shell command asks, whatever it names", async () => {
    const root = tempDir();
    const store = await openStore(tempDir());
    const space = store.space("sessions");
    await stored(space, root, CAP - 3);
    const files = await new WorkspaceDownloads(new DownloadLog(space), root, SILENT).current();
    const facts = { downloadedFiles: files };
    await recordDownloads(curlOf(2), root, facts);
    await files.written();
    expect(decided("bash never-downloaded.sh", files).action).toBe("allow");

    // Five more in one command: one fits, then the record is full.
    await recordDownloads(curlOf(5, "g"), root, facts);
    await files.written();
    for (const command of ["bash never-downloaded.sh", "python3 tool.py", "./run", "ls"]) {
      const decision = decided(command, files);
      expect(decision).toMatchObject({ action: "ask", rule: "download_execute", alwaysOptions: [] });
      expect(decision.personFloor).toBeDefined();
    }
    expect(files.full).toBe(true);
    expect(files.size).toBe(CAP + 1);
    // A step's copy of the set (with what its earlier calls would download) carries the mark.
    const step = stepDownloadedFiles(
      [
        { command: "curl -o y.sh https://x.test/y", concurrent: false },
        { command: "bash z.sh", concurrent: false },
      ],
      files,
    );
    expect(step(1)).not.toBe(files);
    expect(decided("bash z.sh", step(1)).action).toBe("ask");

    // Stored: the files that fit, then the mark alone, and nothing after it.
    expect(await page(space, root, 2)).toEqual([path.join(root, "dl", "g-0.sh")]);
    expect(await page(space, root, 3)).toEqual([DOWNLOAD_RECORD_FULL]);
    await recordDownloads(curlOf(3, "h"), root, facts);
    await files.written();
    expect(files.size).toBe(CAP + 1);
    expect(await page(space, root, 4)).toBeUndefined();
    await store.close();
  });

  it("is still full after a restart: the mark is read back from the store", async () => {
    const root = tempDir();
    const dataDir = tempDir();
    const first = await openStore(dataDir);
    await stored(first.space("sessions"), root, CAP - 1);
    const filled = await new WorkspaceDownloads(
      new DownloadLog(first.space("sessions")),
      root,
      SILENT,
    ).current();
    await recordDownloads(curlOf(2), root, { downloadedFiles: filled });
    await filled.written();
    expect(filled.full).toBe(true);
    await first.close();

    const second = await openStore(dataDir);
    // The record holds the cap's files, no more: only the stored mark makes it full.
    const files = await new WorkspaceDownloads(
      new DownloadLog(second.space("sessions")),
      root,
      SILENT,
    ).current();
    expect(files.size).toBe(CAP + 1);
    expect(decided("bash never-downloaded.sh", files).action).toBe("ask");
    expect(files.full).toBe(true);
    await second.close();
  });

  it("is marked full when a catch-up reads it past the cap, and the mark is stored for the others", async () => {
    const root = tempDir();
    const store = await openStore(tempDir());
    const space = store.space("sessions");
    // Another writer (a build with a larger cap) stored more than the cap.
    await stored(space, root, CAP + 2);

    const files = await new WorkspaceDownloads(new DownloadLog(space), root, SILENT).current();
    expect(files.full).toBe(true);
    // Written by the catch-up itself, with no add or save to start it.
    await vi.waitFor(async () => expect(await page(space, root, 1)).toEqual([DOWNLOAD_RECORD_FULL]));
    expect((await new DownloadLog(space).read(workspaceDownloadLogId(root))).next).toBe(2);
    await store.close();
  });

  describe("with two processes on one redis-server", () => {
    const redis = redisPerFile();

    it("two writers racing past the cap both end full, and each one's file is in the log or under its mark", async () => {
      const root = "/ws-race";
      const [storeA, storeB] = await Promise.all([
        createStore({ url: redis.url, dataDir: os.tmpdir() }),
        createStore({ url: redis.url, dataDir: os.tmpdir() }),
      ]);
      const spaceA = storeA.space("sessions");
      await stored(spaceA, root, CAP - 3);
      const a = await new WorkspaceDownloads(new DownloadLog(spaceA), root, SILENT).current();
      a.add("/ws-race/one.sh");
      a.add("/ws-race/two.sh");
      await a.written();
      const b = await new WorkspaceDownloads(
        new DownloadLog(storeB.space("sessions")),
        root,
        SILENT,
      ).current();
      // One file short of the cap, each adds its own: each fits in its own set, not both in the log.
      a.add("/ws-race/from-a.sh");
      b.add("/ws-race/from-b.sh");
      expect(decided("bash anything.sh", a).action).toBe("allow");
      expect(decided("bash anything.sh", b).action).toBe("allow");
      await Promise.all([a.written(), b.written()]);
      await Promise.all([a.catchUp(), b.catchUp()]);
      for (const files of [a, b]) expect(decided("bash anything.sh", files).action).toBe("ask");

      const read = await new WorkspaceDownloads(new DownloadLog(spaceA), root, SILENT).current();
      expect(decided("bash anything.sh", read).action).toBe("ask");
      const kept = [...read].filter((file) => file !== DOWNLOAD_RECORD_FULL);
      expect(kept.length).toBeLessThanOrEqual(CAP);
      expect(kept).toEqual(expect.arrayContaining(["/ws-race/one.sh", "/ws-race/two.sh"]));
      // The mark is the log's last page: nothing was appended after it.
      expect(await page(spaceA, root, 2)).toEqual([expect.stringMatching(/^\/ws-race\/from-[ab]\.sh$/)]);
      expect(await page(spaceA, root, 3)).toEqual([DOWNLOAD_RECORD_FULL]);
      expect(await page(spaceA, root, 4)).toBeUndefined();
      await Promise.all([storeA.close(), storeB.close()]);
    });
  });
});
