/**
 * Running a sandbox backend's plan the way run_command does, synchronously, for tests that start
 * a plan themselves: its input (bwrap's options) on descriptor 3, here read from a file.
 */
import { type SpawnSyncReturns, spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { PLAN_INPUT_FD, type SpawnPlan } from "../../../src/tools/shell/sandbox-backend.js";

/** Run `plan` to its end; its stdout and stderr as text. */
export function spawnPlanSync(plan: SpawnPlan): SpawnSyncReturns<string> {
  if (plan.input === undefined)
    return spawnSync(plan.file, plan.args, { cwd: plan.cwd, env: plan.env, encoding: "utf8" });
  const dir = mkdtempSync(path.join(tmpdir(), "plan-input-"));
  const file = path.join(dir, "input");
  writeFileSync(file, plan.input);
  const fd = openSync(file, "r");
  try {
    const stdio: (number | "ignore" | "pipe")[] = ["ignore", "pipe", "pipe"];
    stdio[PLAN_INPUT_FD] = fd;
    return spawnSync(plan.file, plan.args, { cwd: plan.cwd, env: plan.env, encoding: "utf8", stdio });
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
}
