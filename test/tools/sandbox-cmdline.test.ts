/**
 * The sandbox's PID 1 is bwrap, and /proc/1/cmdline shows its command line to every command. Its
 * options (the host paths of the data folder, the config file and the covered /etc files among
 * them) reach it on a pipe (`--args`), so the command line a command reads holds only the
 * command itself.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bubblewrapBackend } from "../../src/tools/shell/bubblewrap-backend.js";
import { DEFAULT_RESOURCE_LIMITS, limitedBashArgv } from "../../src/tools/shell/resource-limits.js";
import { call, tempDir } from "./support/tool-context.js";
import { quickRunCommand } from "./support/quick-run-command.js";

let ws: string;
let data: string;
let config: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  let base: string;
  ({ dir: base, cleanup } = await tempDir("sandbox-cmdline-"));
  ws = path.join(base, "workspace");
  // A data folder and a config file the workspace holds, so the sandbox covers them by their paths.
  data = path.join(ws, "service-state-7f3a", "data");
  config = path.join(ws, "service-config-7f3a.yaml");
  await mkdir(data, { recursive: true });
  await writeFile(config, "secret: x\n");
});
afterEach(async () => {
  await cleanup();
});

const run = async (command: string) =>
  (await call(quickRunCommand(ws, { sandbox: bubblewrapBackend({ hidden: [data, config] }) }), { command }))
    .output;

describe("the sandbox's /proc/1/cmdline", () => {
  it("shows none of bwrap's options: no host path of a covered file, no mount", async () => {
    const command = "tr '\\0' '\\n' < /proc/1/cmdline";
    const output = await run(command);
    const shown = output.split("\n[exit")[0] ?? "";
    // bwrap, where its options come from, then the command as run_command runs it, and nothing else.
    expect(shown.split("\n").slice(1)).toEqual([
      "--args",
      "3",
      "--",
      ...limitedBashArgv(command, DEFAULT_RESOURCE_LIMITS),
    ]);
    expect(shown).not.toContain("7f3a");
    expect(shown).not.toContain("--ro-bind");
  });

  it("still covers what the options cover, and the command still runs where it should", async () => {
    const output = await run("pwd; cat service-config-7f3a.yaml; ls -A service-state-7f3a/data");
    expect(output.startsWith(`${ws}\n`)).toBe(true);
    expect(output).not.toContain("secret");
    expect(output.endsWith("[exit code 0]")).toBe(true);
  });
});
