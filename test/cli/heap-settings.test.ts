import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const MODULE = fileURLToPath(new URL("../../src/cli/heap-settings.ts", import.meta.url));

/**
 * In a fresh Node process (V8 flags are process-wide): the young generation's committed size when
 * the settings apply, after start-up-like allocation (objects that all survive), and after more of
 * it once `startUpOver` was called.
 */
const CHILD = `
  const { getHeapSpaceStatistics } = await import("node:v8");
  const { applyHeapSettings } = await import(${JSON.stringify(MODULE)});
  const youngMb = () => getHeapSpaceStatistics().find((s) => s.space_name === "new_space").space_size / 1048576;
  const kept = [];
  const load = () => { for (let i = 0; i < 300000; i++) kept.push({ i, s: "x" + i, a: [i] }); };
  const heap = applyHeapSettings();
  const applied = youngMb();
  load();
  const starting = youngMb();
  heap.startUpOver();
  load();
  process.stdout.write(JSON.stringify({ applied, starting, after: youngMb() }));
`;

function runChild(): Promise<{ applied: number; starting: number; after: number }> {
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", CHILD],
      { cwd: fileURLToPath(new URL("../..", import.meta.url)) },
      (error, stdout) => (error ? reject(error) : resolve(JSON.parse(stdout))),
    ),
  );
}

describe("heap settings", () => {
  it("keep the young generation at its initial size while starting, then let it grow", async () => {
    const { applied, starting, after } = await runChild();
    expect(starting).toBe(applied);
    expect(after).toBeGreaterThan(starting);
  }, 30_000);
});
