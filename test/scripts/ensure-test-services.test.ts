/**
 * The pretest step (scripts/ensure-test-services.sh): when services are missing and it cannot
 * install them, it names them and says how to install them on this system — `sudo apt-get` only
 * where there is an apt-get and the user is not already root.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const SCRIPT = new URL("../../scripts/ensure-test-services.sh", import.meta.url).pathname;
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Runs the script with a PATH holding only `tools` (so the services and apt-get are not found). */
function runWithOnly(tools: readonly string[]) {
  const bin = mkdtempSync(join(tmpdir(), "pretest-bin-"));
  dirs.push(bin);
  for (const tool of tools) {
    const found = spawnSync("bash", ["-c", `command -v ${tool}`], { encoding: "utf8" }).stdout.trim();
    symlinkSync(found, join(bin, tool));
  }
  return spawnSync("/bin/bash", [SCRIPT], { encoding: "utf8", env: { PATH: bin } });
}

describe("ensure-test-services.sh", () => {
  it("without apt-get, names what is missing without telling to run apt-get", () => {
    const result = runWithOnly(["uname", "id"]);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("The tests need: redis-server ripgrep");
    expect(result.stderr).toContain("bubblewrap");
    expect(result.stderr).not.toContain("apt-get");
  });
});
