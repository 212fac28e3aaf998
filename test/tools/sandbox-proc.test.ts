/**
 * The sandbox's /proc cannot change the host's kernel: /proc/sys and the other kernel-setting
 * parts are read-only mounts, and the parts that show kernel memory or keys are covered. Checked
 * by writability (`test -w`) and the mount table only — nothing here writes to /proc.
 */
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bubblewrapBackend } from "../../src/tools/shell/bubblewrap-backend.js";
import { call, tempDir } from "./support/tool-context.js";
import { quickRunCommand } from "./support/quick-run-command.js";

let ws: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  let base: string;
  ({ dir: base, cleanup } = await tempDir("sandbox-proc-"));
  ws = path.join(base, "workspace");
  await mkdir(ws);
});
afterEach(async () => {
  await cleanup();
});

const run = async (command: string) =>
  (await call(quickRunCommand(ws, { sandbox: bubblewrapBackend() }), { command })).output;

describe("the sandbox's /proc", () => {
  it("shows /proc/sys read-only, also to root (kernel.core_pattern cannot be set)", async () => {
    const output = await run(
      `test -w /proc/sys/kernel/core_pattern && echo writable || echo read-only; awk '$2=="/proc/sys"{print $4}' /proc/self/mounts`,
    );
    expect(output).toMatch(/^read-only\n/);
    const options = output.split("\n").slice(1, -1);
    expect(options.length).toBeGreaterThan(0);
    // The last mount on /proc/sys is the one a command meets.
    expect(options.at(-1)).toMatch(/^ro,/);
  });

  it("shows the other kernel-setting parts read-only and covers kernel memory and keys", async () => {
    const output = await run(
      [
        "for f in /proc/sysrq-trigger /proc/irq /proc/bus /proc/fs; do",
        '  [ -e "$f" ] && { test -w "$f" && echo "$f writable" || awk -v f="$f" \'$2==f{o=$4} END{print f, substr(o,1,3)}\' /proc/self/mounts; }',
        "done",
        "for f in /proc/kcore /proc/keys /proc/timer_list /proc/sched_debug /proc/latency_stats; do",
        '  [ -e "$f" ] && echo "$f $(head -c 64 "$f" 2>/dev/null | wc -c)"',
        "done",
        "for d in /proc/acpi /proc/scsi; do",
        '  [ -e "$d" ] && echo "$d $(ls -A "$d" | wc -l)"',
        "done; true",
      ].join("\n"),
    );
    expect(output).not.toContain("writable");
    for (const line of output.split("\n").slice(0, -1)) {
      if (/^\/proc\/(sysrq-trigger|irq|bus|fs) /.test(line)) expect(line).toMatch(/ ro,$/);
      else expect(line).toMatch(/ 0$/);
    }
  });
});
