import { execFileSync } from "node:child_process";
import { symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createWorkspacePaths } from "../../src/tools/files/workspace-paths.js";
import { cleanEnv } from "../../src/tools/shell/clean-env.js";
import { createRunCommandTool, type RunCommandOptions } from "../../src/tools/shell/run-command.js";
import { unsandboxedBackend } from "../../src/tools/shell/sandbox-backend.js";
import { call, makeContext, type TestContext, tempDir } from "./support/tool-context.js";
import { quickRunCommand } from "./support/quick-run-command.js";

let ws: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir: ws, cleanup } = await tempDir("shell-"));
});
afterEach(async () => {
  await cleanup();
});

const tool = (options: Partial<RunCommandOptions> = {}) => quickRunCommand(ws, options);

/** Live (non-zombie) processes in a group, read with ps — independent of the code under test. */
function liveMembers(pgid: number): string[] {
  const table = execFileSync("ps", ["-eo", "pgid=,pid=,stat=,comm="], { encoding: "utf8" });
  return table
    .split("\n")
    .map((row) => row.trim().split(/\s+/))
    .filter(([group, , stat]) => Number(group) === pgid && stat !== undefined && !stat.startsWith("Z"))
    .map((row) => row.join(" "));
}

function pidFrom(output: string): number {
  const match = /pid=(\d+)/.exec(output);
  if (!match) throw new Error(`no pid in output: ${output}`);
  return Number(match[1]);
}

describe("run_command", () => {
  it("runs bash in the workspace, streams lines live and reports the exit code", async () => {
    const context = makeContext();
    const result = await call(tool(), { command: "pwd; echo hello && echo world; exit 3" }, context);
    expect(result).toEqual({
      ok: false,
      output: `${ws}\nhello\nworld\n[exit code 3]`,
      summary: "exit 3",
    });
    expect(context.emitted).toEqual([ws, "hello", "world"]);
    expect(await call(tool(), { command: "true" })).toEqual({
      ok: true,
      output: "(no output)\n[exit code 0]",
    });
  });

  it("sums up a failed run for status lines: the exit code, or the signal that killed it", async () => {
    expect((await call(tool(), { command: "exit 1" })).summary).toBe("exit 1");
    // Unsandboxed: bash is the spawned process itself (in the sandbox bwrap reports 128 + signal).
    const killed = await call(tool({ sandbox: unsandboxedBackend() }), {
      command: "echo before; kill -KILL $$",
    });
    expect(killed).toEqual({
      ok: false,
      output: "before\n[killed by SIGKILL]",
      summary: "killed by SIGKILL",
    });
    expect((await call(tool(), { command: "exit 0" })).summary).toBeUndefined();
  });

  it("gives the command a clean environment: no secrets of the service", async () => {
    process.env.SLACK_BOT_TOKEN = "xoxb-very-secret";
    process.env.OPENAI_API_KEY = "sk-very-secret";
    try {
      const result = await call(tool({ env: { PROJECT_FLAG: "on" } }), { command: "env" });
      expect(result.output).not.toMatch(/very-secret|SLACK_BOT_TOKEN|OPENAI_API_KEY/);
      expect(result.output).toMatch(/^PATH=/m);
      expect(result.output).toMatch(/^PROJECT_FLAG=on$/m);
      expect(result.output).toMatch(/^GIT_TERMINAL_PROMPT=0$/m);
    } finally {
      delete process.env.SLACK_BOT_TOKEN;
      delete process.env.OPENAI_API_KEY;
    }
    expect(
      cleanEnv({}, { PATH: "/bin", LC_ALL: "C", AWS_SECRET_ACCESS_KEY: "x", TELEGRAM_BOT_TOKEN: "y" }),
    ).toEqual({
      PATH: "/bin",
      LC_ALL: "C",
      PAGER: "cat",
      GIT_PAGER: "cat",
      GIT_TERMINAL_PROMPT: "0",
      DEBIAN_FRONTEND: "noninteractive",
    });
  });

  it("on timeout kills the whole process group, also children that ignore SIGTERM", async () => {
    const result = await call(tool(), {
      command: "echo pid=$$; (trap '' TERM; sleep 30; echo survived) & sleep 30",
      timeout_s: 0.5,
    });
    expect(result.ok).toBe(false);
    expect(result.output).toMatch(
      /\[timed out after 0\.5 s; the command and its child processes were stopped\]$/,
    );
    expect(result.summary).toBe("timed out after 0.5 s");
    expect(result.output).not.toContain("survived");
    expect(liveMembers(pidFrom(result.output))).toEqual([]);
  });

  it("an interrupt kills the running command and its children", async () => {
    const base = makeContext();
    let pid = 0;
    const context: TestContext = {
      ...base,
      emitOutput(line) {
        base.emitted.push(line);
        if (line.startsWith("pid=")) {
          pid = pidFrom(line);
          base.controller.abort();
        }
      },
    };
    const result = await call(tool(), { command: "echo pid=$$; sleep 30 & sleep 30" }, context);
    expect(result).toEqual({
      ok: false,
      output: `pid=${pid}\n[interrupted; the command and its child processes were stopped]`,
      summary: "interrupted",
    });
    expect(liveMembers(pid)).toEqual([]);
  });

  it("caps huge output to head + tail and limits live lines", async () => {
    const context = makeContext();
    const result = await call(
      tool({ outputMaxChars: 1000, maxLiveLines: 5 }),
      { command: "seq 1 200000" },
      context,
    );
    expect(result.ok).toBe(true);
    expect(result.output.startsWith("1\n2\n3\n")).toBe(true);
    expect(result.output).toMatch(/characters omitted/);
    expect(result.output).toMatch(/\n199999\n200000\n\[exit code 0\]$/);
    expect(result.output.length).toBeLessThan(1100);
    expect(context.emitted).toEqual([
      "1",
      "2",
      "3",
      "4",
      "5",
      "… (more output; the result will show its end)",
    ]);
  });

  it("stops background processes that keep the output open after the shell exits", async () => {
    // Unsandboxed: in the sandbox the PID namespace ends them with the shell (sandbox.test.ts).
    const result = await call(tool({ sandbox: unsandboxedBackend() }), {
      command: "echo pid=$$; sleep 30 &",
    });
    expect(result.ok).toBe(true);
    expect(result.output).toMatch(
      /\[exit code 0\]\n\[background processes still holding the output were stopped\]$/,
    );
    expect(liveMembers(pidFrom(result.output))).toEqual([]);
  });

  it("reports a workspace that does not exist instead of crashing", async () => {
    const missing = createRunCommandTool({ paths: createWorkspacePaths({ root: path.join(ws, "gone") }) });
    const result = await call(missing, { command: "true" });
    expect(result.ok).toBe(false);
    expect(result.output).toMatch(/^could not start bash in .*gone: /);
  });

  it("cuts a timeout above the maximum and previews the command as code", async () => {
    const limited = tool({ maxTimeoutS: 1 });
    const result = await call(limited, { command: "echo ok", timeout_s: 9999 });
    expect(result.output).toBe("[timeout_s 9999 is above the maximum; using 1 s]\nok\n[exit code 0]");
    expect(await limited.preview?.({ command: "ls -la", timeout_s: 5 }, makeContext())).toEqual({
      summary: "Run a command in the workspace (timeout 1 s)",
      detail: { kind: "code", text: "ls -la" },
    });
  });

  it("records files that curl or wget download in the session facts, resolved in the workspace", async () => {
    await symlink(ws, path.join(ws, "here"));
    const context = makeContext();
    await call(
      tool(),
      {
        command:
          "curl -sSfo here/tool.sh http://127.0.0.1:1/tool.sh || wget -q -O other.bin http://127.0.0.1:1/x || true",
      },
      context,
    );
    expect([...context.facts.downloadedFiles].sort()).toEqual([
      path.join(ws, "other.bin"),
      path.join(ws, "tool.sh"),
    ]);
  });

  it("records the file a download the line does not name added to the workspace (the server named it)", async () => {
    const context = makeContext();
    // The function stands in for curl saving under the server's name (no network in tests); the
    // file is written by a script, not on the line, as curl writes it.
    await writeFile(path.join(ws, "server.sh"), "echo 'echo evil' > evil.sh\n");
    await call(tool(), { command: "curl() { bash server.sh; }; curl -OJ http://127.0.0.1:1/dl" }, context);
    expect([...context.facts.downloadedFiles].sort()).toEqual([
      `${ws}/`,
      path.join(ws, "dl"),
      path.join(ws, "evil.sh"),
    ]);
  });
});
