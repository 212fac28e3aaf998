/**
 * Scheduled tasks over a SIGKILL: a child process sets up tasks and starts running them; it is
 * killed with SIGKILL right after its first run (once it has printed the tasks' ids), and a new
 * ScheduleService on the same SQLite store carries on — every occurrence runs at most once across
 * both processes, the one-shot runs exactly once, and the repeating task keeps running after the
 * restart.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ScheduleService } from "../../src/schedules/schedule-service.js";
import { createStore } from "../../src/store/create-store.js";
import { storeSlotBudget } from "../../src/store/slot-budget.js";
import { CHILD_SETTINGS, recordingSessions } from "./child-support.js";

const ROOT = path.join(import.meta.dirname, "..", "..");

/**
 * Run the child until it has printed both CREATED and RAN, then SIGKILL it; resolves with its
 * CREATED line. Either may come first: the repeating task's first run can fall while the child
 * is still creating the one-shot (a second boundary), and killing it on RAN alone would lose the
 * CREATED line.
 */
function runChildUntilFirstRun(dataDir: string, runsFile: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const script = ["--import", "tsx", "test/schedules/schedule-child.ts", dataDir, runsFile];
    const child = spawn(process.execPath, script, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let killed = false;
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      const lines = stdout.split("\n");
      if (!killed && lines.includes("RAN") && lines.some((line) => line.startsWith("CREATED "))) {
        killed = true;
        child.kill("SIGKILL");
      }
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("exit", (code, signal) => {
      const created = stdout.split("\n").find((line) => line.startsWith("CREATED "));
      if (killed && signal === "SIGKILL" && created) resolve(created);
      else reject(new Error(`child ended (${code ?? signal}) early:\n${stdout}\n${stderr}`));
    });
  });
}

function runsIn(file: string): { taskId: string; dueAt: string }[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      const [taskId = "", dueAt = ""] = line.split(" ");
      return { taskId, dueAt };
    });
}

describe("scheduled tasks over a SIGKILL", () => {
  it("runs each occurrence at most once across the killed process and its successor", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "schedules-kill-"));
    const runsFile = path.join(dataDir, "runs.txt");
    try {
      const created = await runChildUntilFirstRun(dataDir, runsFile);
      const [cronId, onceId] = [...created.matchAll(/tsk_[0-9a-f]{12}/g)].map((m) => m[0]);
      expect(cronId && onceId).toBeTruthy();
      const beforeRestart = runsIn(runsFile).length;
      expect(beforeRestart).toBeGreaterThanOrEqual(1);

      // Waits for the runs themselves: each run of the successor checks whether the one-shot has
      // run (in either process) and the repeating task twice since the restart.
      let carriedOn!: () => void;
      const done = new Promise<void>((resolve) => {
        carriedOn = resolve;
      });
      const store = await createStore({ url: undefined, dataDir });
      const service = await ScheduleService.open({
        store,
        sessions: recordingSessions(runsFile, () => {
          const runs = runsIn(runsFile);
          const cronAfter = runs.slice(beforeRestart).filter((r) => r.taskId === cronId).length;
          if (runs.some((r) => r.taskId === onceId) && cronAfter >= 2) carriedOn();
        }),
        notify: async () => undefined,
        settings: CHILD_SETTINGS,
        owner: "successor",
        wakeBudget: storeSlotBudget(store.space("budgets")),
      });
      service.start();
      await done;
      await service.shutdown();
      await store.close();

      const runs = runsIn(runsFile);
      const keys = runs.map((r) => `${r.taskId} ${r.dueAt}`);
      expect(new Set(keys).size).toBe(keys.length);
      expect(runs.filter((r) => r.taskId === onceId)).toHaveLength(1);
      expect(runs.slice(beforeRestart).filter((r) => r.taskId === cronId).length).toBeGreaterThanOrEqual(2);
      expect(existsSync(`${runsFile}.errors`)).toBe(false);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
    // Real seconds by design (a process started, a one-shot 4 s after its creation): room for a loaded machine.
  }, 60_000);
});
