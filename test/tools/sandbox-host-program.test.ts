/**
 * run_command starts bubblewrap on the host in the workspace, so a bare "bwrap" must never be found
 * there: with an empty entry in the service's PATH, a `bwrap` a command wrote into the workspace
 * would otherwise run on the host, unsandboxed, with the command's argv.
 */
import { chmod, readFile, realpath, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { bubblewrapBackend } from "../../src/tools/shell/bubblewrap-backend.js";
import { spawnPlanSync } from "./support/spawn-plan.js";
import { tempDir } from "./support/tool-context.js";

const realPath = process.env.PATH;
let ws: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  const made = await tempDir("sandbox-host-program-");
  cleanup = made.cleanup;
  ws = await realpath(made.dir);
});
afterEach(async () => {
  process.env.PATH = realPath;
  await cleanup();
});

it("plans the real bwrap by its absolute path when PATH begins with an empty entry", async () => {
  const mark = path.join(ws, "ran");
  await writeFile(path.join(ws, "bwrap"), `#!/bin/sh\necho planted > ${JSON.stringify(mark)}\n`);
  await chmod(path.join(ws, "bwrap"), 0o755);
  process.env.PATH = `:${realPath}`;
  const backend = bubblewrapBackend({ hidden: [] });
  expect((await backend.status()).kind).toBe("sandboxed");
  const plan = await backend.plan({ argv: ["true"], cwd: ws, env: { PATH: "/usr/bin:/bin" }, roots: [ws] });
  expect(path.isAbsolute(plan.file)).toBe(true);
  expect(path.dirname(plan.file)).not.toBe(ws);
  const run = spawnPlanSync(plan);
  expect(run.status).toBe(0);
  await expect(readFile(mark)).rejects.toThrow(/ENOENT/);
});

it("reads a bwrap in none of PATH's absolute entries as not installed", async () => {
  process.env.PATH = ".:relative";
  const status = await bubblewrapBackend({ hidden: [] }).status();
  expect(status.kind).toBe("unavailable");
  expect(status.kind === "unavailable" && status.reason).toMatch(/bubblewrap \(bwrap\) is not installed/);
});
