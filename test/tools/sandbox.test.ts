import { existsSync } from "node:fs";
import { chmod, mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { shellSandboxCheck } from "../../src/cli/doctor-shell-check.js";
import { configSchema } from "../../src/config/schema.js";
import { bubblewrapBackend } from "../../src/tools/shell/bubblewrap-backend.js";
import { credentialLikeEntries } from "../../src/tools/shell/etc-secrets.js";
import type { RunCommandOptions } from "../../src/tools/shell/run-command.js";
import { unsandboxedBackend } from "../../src/tools/shell/sandbox-backend.js";
import { call, makeContext, tempDir } from "./support/tool-context.js";
import { quickRunCommand } from "./support/quick-run-command.js";

let base: string;
let ws: string;
let data: string;
let cleanup: () => Promise<void>;
let server: Server;
let port: number;

beforeAll(async () => {
  server = createServer((_request, response) => response.end("host-service-reply"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(async () => {
  ({ dir: base, cleanup } = await tempDir("sandbox-"));
  ws = path.join(base, "workspace");
  data = path.join(base, "data");
  await mkdir(ws);
  await mkdir(data);
  await writeFile(path.join(data, "sessions.sqlite"), "OTHER-SESSION-TEXT");
  await writeFile(path.join(base, ".env"), "SLACK_BOT_TOKEN=xoxb-in-dotenv");
});
afterEach(async () => {
  await cleanup();
});

const tool = (options: Partial<RunCommandOptions> = {}) =>
  quickRunCommand(ws, {
    sandbox: bubblewrapBackend({ hidden: [data, path.join(base, ".env")] }),
    ...options,
  });

const run = async (command: string, options: Partial<RunCommandOptions> = {}) =>
  (await call(tool(options), { command })).output;

describe("run_command in the bubblewrap sandbox", () => {
  it("sees the workspace read-write at its real path and nothing of the host beside it", async () => {
    expect(await run("pwd; echo made > inside.txt; ls -a ..")).toBe(`${ws}\n.\n..\nworkspace\n[exit code 0]`);
    expect(await readFile(path.join(ws, "inside.txt"), "utf8")).toBe("made\n");
    const outside = await run(
      `cat ../data/sessions.sqlite ../.env; strings ../data/*.sqlite; echo x > ../out`,
    );
    expect(outside).not.toMatch(/OTHER-SESSION-TEXT|xoxb-in-dotenv/);
    expect(existsSync(path.join(base, "out"))).toBe(false);
  });

  it("keeps /tmp and HOME private: writes there never reach the host", async () => {
    const marker = `coworker-sandbox-${process.pid}-${Date.now()}`;
    expect(await run(`echo x > /tmp/${marker} && echo x > ~/${marker} && echo "$HOME"`)).toBe(
      "/home/coworker\n[exit code 0]",
    );
    expect(existsSync(path.join("/tmp", marker))).toBe(false);
    expect(await run(`ls /tmp/${marker}`)).toMatch(/No such file/);
  });

  it("shows no secret of the service: env, /proc/1/environ, $PPID and every /proc/*/environ", async () => {
    process.env.SLACK_BOT_TOKEN = "xoxb-very-secret";
    process.env.OPENAI_API_KEY = "sk-very-secret";
    try {
      const output = await run(
        "env; cat /proc/1/environ /proc/$PPID/environ; for f in /proc/*/environ; do cat $f; done; ps -e | wc -l",
      );
      expect(output).not.toMatch(/very-secret|SLACK_BOT_TOKEN|OPENAI_API_KEY/);
      expect(output).toMatch(/GIT_TERMINAL_PROMPT=0/);
    } finally {
      delete process.env.SLACK_BOT_TOKEN;
      delete process.env.OPENAI_API_KEY;
    }
  });

  it("covers credential-like /etc entries and hides a data folder inside the workspace", async () => {
    expect(
      await run("cat /etc/shadow 2>/dev/null | wc -c; test -r /etc/passwd && echo passwd-readable"),
    ).toMatch(/^0\npasswd-readable\n/);
    await mkdir(path.join(ws, "data"));
    await writeFile(path.join(ws, "data", "store.sqlite"), "OTHER-SESSION-TEXT");
    const inner = tool({ sandbox: bubblewrapBackend({ hidden: [path.join(ws, "data")] }) });
    const output = (await call(inner, { command: "ls data; cat data/store.sqlite" })).output;
    expect(output).not.toContain("OTHER-SESSION-TEXT");
    // The cover is an empty folder that takes nothing either (it would be memory no limit holds).
    const write = await call(inner, { command: "(echo x > data/fill) 2>/dev/null || echo cover-read-only" });
    expect(write.output).toBe("cover-read-only\n[exit code 0]");
  });

  it("covers where services keep their environment, and ordinary tools still find what they need", async () => {
    // /etc/environment is covered by /dev/null (a character device, unreadable); the folders are empty.
    const hidden = await run(
      "test -c /etc/environment && echo environment-covered; cat /etc/environment 2>/dev/null | wc -c; " +
        "find /etc/systemd /etc/default /etc/init.d /etc/profile.d -mindepth 1 | wc -l",
    );
    expect(hidden).toBe("environment-covered\n0\n0\n[exit code 0]");
    const ordinary = await run(
      "head -1 /etc/passwd | cut -d: -f1; git --version | cut -d' ' -f1-2; test -d /etc/ssl/certs && echo ssl; " +
        "test -r /etc/hosts && test -r /etc/nsswitch.conf && test -r /etc/ld.so.cache && echo system-files",
    );
    expect(ordinary).toBe("root\ngit version\nssl\nsystem-files\n[exit code 0]");
  });

  it("ends whatever the command started when it ends: setsid, nohup and & included", async () => {
    const result = await call(tool(), {
      command:
        "setsid sh -c 'sleep 1; touch late' & nohup sh -c 'sleep 1; touch late2' >/dev/null 2>&1 & echo started",
    });
    expect(result.output).toBe("started\n[exit code 0]");
    await delay(1600);
    expect(existsSync(path.join(ws, "late"))).toBe(false);
    expect(existsSync(path.join(ws, "late2"))).toBe(false);
  });

  it("a timeout ends the whole sandbox, also a setsid child that ignores SIGTERM", async () => {
    const result = await call(tool(), {
      command: "setsid sh -c \"trap '' TERM; sleep 2; touch late\" & sleep 30",
      timeout_s: 0.5,
    });
    expect(result.summary).toBe("timed out after 0.5 s");
    await delay(2200);
    expect(existsSync(path.join(ws, "late"))).toBe(false);
  });

  it("has no network unless tools.shell.network is set", async () => {
    const probe = `exec 3<>/dev/tcp/127.0.0.1/${port} && printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&3 && cat <&3`;
    expect(await run(probe)).not.toContain("host-service-reply");
    const networked = tool({ sandbox: bubblewrapBackend({ network: true }) });
    expect((await call(networked, { command: probe })).output).toContain("host-service-reply");
  });

  it("bounds what a command can fill without a process: small scratch folders, a read-only root, no nested namespaces", async () => {
    const sandbox = bubblewrapBackend({ hidden: [data], scratchMb: 1 });
    const fill = (dir: string) =>
      `head -c 3000000 /dev/zero > ${dir}/fill 2>/dev/null; stat -c %s ${dir}/fill`;
    const output = await run(
      [
        fill("/tmp"),
        fill("$HOME"),
        fill("/dev/shm"),
        "(echo x > /mine) 2>/dev/null || echo root-read-only",
        "mkdir /dev/mine 2>/dev/null || echo dev-read-only",
        "unshare -rm true 2>/dev/null || echo no-nested-namespace",
      ].join("; "),
      { sandbox },
    );
    const lines = output.split("\n");
    // Each scratch folder took at most its 1 MiB of the 3 MB written to it.
    expect(
      lines
        .slice(0, 3)
        .map(Number)
        .every((size) => size > 0 && size <= 1_048_576),
    ).toBe(true);
    expect(lines.slice(3)).toEqual([
      "root-read-only",
      "dev-read-only",
      "no-nested-namespace",
      "[exit code 0]",
    ]);
    expect(await run("echo kept > made.txt && cat made.txt", { sandbox })).toBe("kept\n[exit code 0]");
  });

  it("falls back to bwrap's plain namespaces where it cannot seal them, still sandboxed", async () => {
    const oldBwrap = path.join(base, "bwrap-0.6");
    await writeFile(
      oldBwrap,
      '#!/bin/sh\ncase " $* " in *" --disable-userns "*) echo "bwrap: Unknown option --disable-userns" >&2; exit 1;; esac\nexec bwrap "$@"\n',
    );
    await chmod(oldBwrap, 0o755);
    const sandbox = bubblewrapBackend({ bwrap: oldBwrap, hidden: [data] });
    expect((await sandbox.status()).kind).toBe("sandboxed");
    expect(await run("cat ../data/sessions.sqlite 2>/dev/null; pwd", { sandbox })).toBe(
      `${ws}\n[exit code 0]`,
    );
  });

  it("contains a runaway file with the file-size limit", async () => {
    const limits = { cpuSeconds: 10, fileSizeMb: 1, processes: 1024, memoryMb: 1024, addressSpaceMb: 8192 };
    const output = await run("head -c 5000000 /dev/zero > big; stat -c %s big", { limits });
    expect(output).toMatch(/File size limit exceeded/);
    expect(output).toMatch(/\n1048576\n/);
  });

  it("a writer that ignores SIGXFSZ gets 'File too large' and the file stops at the limit", async () => {
    const limits = { cpuSeconds: 10, fileSizeMb: 1, processes: 1024, memoryMb: 1024, addressSpaceMb: 8192 };
    const output = await run(
      "trap '' XFSZ; head -c 5000000 /dev/zero > big; echo rc=$?; head -c 10 /dev/zero >> big; stat -c %s big",
      { limits },
    );
    expect(output).toMatch(/head: error writing 'standard output': File too large\nrc=1\n/);
    expect(output).toMatch(/\n1048576\n\[exit code 0\]$/);
    expect((await stat(path.join(ws, "big"))).size).toBe(1_048_576);
  });
});

// The kernel exempts host uid 0 from RLIMIT_NPROC (also in the sandbox's user namespace, with
// every capability dropped: bwrap started by root maps the command to host uid 0), so this holds
// only when the service, and so the test, runs as an ordinary user (README: Shell sandbox).
describe.skipIf(process.getuid?.() === 0)("run_command's process limit (as an ordinary user)", () => {
  it("contains a fork bomb: no more than `processes` are spawned, and none outlives the command", async () => {
    const limits = { cpuSeconds: 10, fileSizeMb: 1024, processes: 50, memoryMb: 1024, addressSpaceMb: 8192 };
    const bomb =
      "perl -e '$n = 0; for (1 .. 2000) { $p = fork; last unless defined $p; " +
      'if (!$p) { sleep 30; exit } $n++ } print "spawned $n: $!\n"\' coworker-fork-bomb';
    const output = await run(bomb, { limits });
    const spawned = Number(/spawned (\d+): Resource temporarily unavailable/.exec(output)?.[1]);
    expect(spawned).toBeGreaterThan(0);
    expect(spawned).toBeLessThan(50);
    await delay(200);
    expect(await processesNamed("coworker-fork-bomb")).toEqual([]);
  });
});

/** The host's processes whose command line holds `marker`. */
async function processesNamed(marker: string): Promise<string[]> {
  const found: string[] = [];
  for (const pid of (await readdir("/proc")).filter((name) => /^\d+$/.test(name))) {
    const line = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
    if (line.includes(marker)) found.push(pid);
  }
  return found;
}

describe("run_command's memory limit", () => {
  it("stops an allocation past memory_mb and lets a small one through", async () => {
    const limits = { cpuSeconds: 10, fileSizeMb: 1024, processes: 1024, memoryMb: 64, addressSpaceMb: 8192 };
    // tail keeps the one endless line in memory: 200 MB of it passes a 64 MiB heap.
    const big = await run("head -c 200M /dev/zero | tail | wc -c", { limits });
    expect(big).toMatch(/tail: memory exhausted/);
    expect(big).toMatch(/^0$/m);
    expect(await run("head -c 10M /dev/zero | tail | wc -c", { limits })).toBe("10485760\n[exit code 0]");
  });

  it("the default memory limit holds: 2 GiB fails, and Node still starts under it", async () => {
    const big = await run("head -c 2G /dev/zero | tail | wc -c");
    expect(big).toMatch(/tail: memory exhausted/);
    // Node reserves far more address space than it uses: it would not start under an
    // address-space cap of 1 GiB, and does under the data cap (only where it lives in /usr).
    if (process.execPath.startsWith("/usr/"))
      expect(await run(`${process.execPath} -e "console.log(Buffer.alloc(100e6).length)"`)).toBe(
        "100000000\n[exit code 0]",
      );
  });
});

describe("credential-like /etc entries", () => {
  it("are those other users may not read and those named like keys or secrets", async () => {
    const etc = path.join(base, "etc");
    await mkdir(path.join(etc, "ssl", "private"), { recursive: true });
    await mkdir(path.join(etc, "app"), { recursive: true });
    await writeFile(path.join(etc, "hosts"), "127.0.0.1 localhost\n");
    await writeFile(path.join(etc, "shadow"), "root:x");
    await chmod(path.join(etc, "shadow"), 0o640);
    await chmod(path.join(etc, "ssl", "private"), 0o700);
    await writeFile(path.join(etc, "app", "server.key"), "KEY");
    await writeFile(path.join(etc, "app", "settings.conf"), "x=1");
    const masked = (await credentialLikeEntries(etc)).map((entry) => path.relative(etc, entry.path)).sort();
    expect(masked).toEqual(["app/server.key", "shadow", "ssl/private"]);
  });

  it("include where services keep their environment, at the top of /etc only, whatever their mode", async () => {
    const etc = path.join(base, "etc");
    await mkdir(path.join(etc, "systemd", "system"), { recursive: true });
    await mkdir(path.join(etc, "default"), { recursive: true });
    await mkdir(path.join(etc, "app", "default"), { recursive: true });
    await writeFile(path.join(etc, "environment"), "SLACK_BOT_TOKEN=xoxb-1\n");
    await writeFile(
      path.join(etc, "systemd", "system", "coworker.service"),
      "Environment=SLACK_BOT_TOKEN=xoxb-1\n",
    );
    await writeFile(path.join(etc, "default", "coworker"), "SLACK_BOT_TOKEN=xoxb-1\n");
    await writeFile(path.join(etc, "passwd"), "root:x:0:0::/root:/bin/bash\n");
    const masked = (await credentialLikeEntries(etc)).map((entry) => path.relative(etc, entry.path)).sort();
    expect(masked).toEqual(["default", "environment", "systemd"]);
  });
});

describe("when the sandbox cannot run", () => {
  it("run_command answers 'shell unavailable' and doctor says how to fix it", async () => {
    const missing = bubblewrapBackend({ bwrap: path.join(base, "no-such-bwrap") });
    const result = await call(tool({ sandbox: missing }), { command: "touch ran" });
    expect(result.ok).toBe(false);
    expect(result.summary).toBe("shell unavailable");
    expect(result.output).toMatch(/^shell unavailable: bubblewrap \(.*no-such-bwrap\) is not installed/);
    expect(result.output).toMatch(/apt-get install bubblewrap/);
    expect(existsSync(path.join(ws, "ran"))).toBe(false);
    const config = configSchema.parse({});
    const check = await shellSandboxCheck(config, missing).run(new AbortController().signal);
    expect(check).toMatchObject({ status: "fail", fix: expect.stringMatching(/apt-get install bubblewrap/) });
    expect(await shellSandboxCheck(config, undefined, 1000).run(new AbortController().signal)).toEqual({
      status: "pass",
      summary: "bubblewrap sandbox, no network",
    });
    // As root the kernel does not apply the process limit, sandbox or not: doctor says so.
    expect(await shellSandboxCheck(config, undefined, 0).run(new AbortController().signal)).toEqual({
      status: "warn",
      summary:
        "bubblewrap sandbox, no network; running as root, so the process limit (tools.shell.limits.processes) does not hold",
      fix: expect.stringMatching(/ordinary user.*TasksMax=.*--pids-limit/),
    });
  });

  it("an explicit sandbox: off runs on the host and every card says unsandboxed", async () => {
    const off = tool({ sandbox: unsandboxedBackend() });
    expect((await call(off, { command: "cat ../data/sessions.sqlite" })).output).toContain(
      "OTHER-SESSION-TEXT",
    );
    const preview = await off.preview?.({ command: "ls" }, makeContext());
    expect(preview?.summary).toMatch(/UNSANDBOXED/);
    expect((await tool().preview?.({ command: "ls" }, makeContext()))?.summary).toBe(
      "Run a command in the workspace",
    );
    const config = configSchema.parse({ tools: { shell: { sandbox: "off" } } });
    expect((await shellSandboxCheck(config).run(new AbortController().signal)).status).toBe("warn");
  });
});
