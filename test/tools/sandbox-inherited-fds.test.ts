import { spawn } from "node:child_process";
import { realpath } from "node:fs/promises";
import type { Readable, Writable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bubblewrapBackend } from "../../src/tools/shell/bubblewrap-backend.js";
import { DEFAULT_RESOURCE_LIMITS, limitedBashArgv } from "../../src/tools/shell/resource-limits.js";
import { type SandboxBackend, unsandboxedBackend } from "../../src/tools/shell/sandbox-backend.js";
import { tempDir } from "./support/tool-context.js";

let ws: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  const made = await tempDir("inherited-fds-");
  cleanup = made.cleanup;
  ws = await realpath(made.dir);
});
afterEach(async () => cleanup());

function collect(stream: Readable): Promise<string> {
  return new Promise((resolve) => {
    let text = "";
    stream.setEncoding("utf8").on("data", (chunk: string) => {
      text += chunk;
    });
    stream.once("close", () => resolve(text));
  });
}

/**
 * Run `command` the way run_command does (the limits wrapper, through `backend`, the plan's input
 * on descriptor 3), but with a fifth descriptor, a pipe without close-on-exec in the child, as one
 * the service inherited would be; answer the command's stdout and what reached the pipe.
 */
async function runWithExtraFd(backend: SandboxBackend, command: string) {
  const plan = await backend.plan({
    argv: limitedBashArgv(command, DEFAULT_RESOURCE_LIMITS),
    cwd: ws,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    roots: [ws],
  });
  const child = spawn(plan.file, plan.args, {
    cwd: plan.cwd,
    env: plan.env,
    stdio: ["ignore", "pipe", "pipe", plan.input === undefined ? "ignore" : "pipe", "pipe"],
  });
  if (plan.input !== undefined) (child.stdio[3] as Writable).end(plan.input);
  const extra = child.stdio[4] as Readable;
  const [stdout, leaked] = await Promise.all([collect(child.stdout as Readable), collect(extra)]);
  return { stdout, leaked };
}

const PROBE = "ls /proc/self/fd | sort -n | tr '\\n' ' '; echo; (echo LEAK >&4) 2>/dev/null && echo WROTE";

describe("descriptors the service passes on without close-on-exec", () => {
  it("are closed before the command runs in the bubblewrap sandbox: it cannot write to them", async () => {
    const { stdout, leaked } = await runWithExtraFd(bubblewrapBackend({ hidden: [] }), PROBE);
    // 0, 1, 2 and the descriptor `ls` lists the folder with.
    expect(stdout).toBe("0 1 2 3 \n");
    expect(leaked).toBe("");
  });

  it("are closed before the command runs unsandboxed too", async () => {
    const { stdout, leaked } = await runWithExtraFd(unsandboxedBackend(), PROBE);
    expect(stdout).toBe("0 1 2 3 \n");
    expect(leaked).toBe("");
  });
});
