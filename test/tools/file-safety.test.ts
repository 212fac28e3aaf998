import { link, mkdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { Worker } from "node:worker_threads";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ConversationWorkspace } from "../../src/tools/files/conversation-workspace.js";
import { credentialReason } from "../../src/tools/files/credential-paths.js";
import { createEditFileTool } from "../../src/tools/files/edit-file.js";
import { createListFilesTool } from "../../src/tools/files/list-files.js";
import { createReadFileTool } from "../../src/tools/files/read-file.js";
import { createSearchFilesTool } from "../../src/tools/files/search-files.js";
import { createWriteFileTool } from "../../src/tools/files/write-file.js";
import { call, tempDir } from "./support/tool-context.js";
import { toolWorkspace } from "./support/tool-workspace.js";

let ws: string;
let outside: string;
let workspace: ConversationWorkspace;
const cleanups: Array<() => Promise<void>> = [];

beforeEach(async () => {
  const dirs = await Promise.all([tempDir("ws-"), tempDir("outside-")]);
  cleanups.push(...dirs.map((d) => d.cleanup));
  [ws, outside] = dirs.map((d) => d.dir) as [string, string];
  await writeFile(path.join(outside, "secret.txt"), "OUTSIDE SECRET\n");
  workspace = toolWorkspace({ root: ws });
});

afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

describe("credential rules", () => {
  it.each([
    [[".env"], "environment secrets"],
    [[".env.local"], "environment secrets"],
    [["app", ".env.production"], "environment secrets"],
    [["id_rsa"], "private key"],
    [["certs", "server.pem"], "private key"],
    [["tls", "site.key"], "private key"],
    [[".ssh", "config"], ".ssh/"],
    [[".ssh"], ".ssh/"],
    [[".netrc"], "credential store"],
    [[".npmrc"], "credential store"],
    [[".git-credentials"], "credential store"],
    [["home", ".aws", "credentials"], "credential store"],
    [[".docker", "config.json"], "credential store"],
    [[".kube", "config"], "credential store"],
    [[".ENV"], "environment secrets"],
    [[".envrc"], "environment secrets"],
    [["worker", ".dev.vars"], "environment secrets"],
    [[".my.cnf"], "credential store"],
    [[".s3cfg"], "credential store"],
    [[".boto"], "credential store"],
    [["home", ".cargo", "credentials.toml"], "credential store"],
    [[".cargo", "credentials"], "credential store"],
    [[".gem", "credentials"], "credential store"],
  ])("%j is a credential file", (components, reason) => {
    expect(credentialReason(components)).toContain(reason);
  });

  it.each([
    [[".env.example"]],
    [[".env.sample"]],
    [["src", "env.ts"]],
    [["id_rsa.pub"]],
    [["docker", "config.json"]],
    [["README.md"]],
    [[".environment"]],
    [[".envrc.example"]],
    [["dev.vars"]],
    [[".cargo", "config.toml"]],
  ])("%j is not", (components) => {
    expect(credentialReason(components)).toBeUndefined();
  });

  it("refuses every spelling of .env for every file tool, on the resolved real path", async () => {
    await writeFile(path.join(ws, ".env"), "OPENAI_API_KEY=sk-live-123\n");
    await mkdir(path.join(ws, "sub"));
    await symlink(path.join(ws, ".env"), path.join(ws, "harmless.txt"));
    const read = createReadFileTool({ workspace });
    const write = createWriteFileTool({ workspace });
    const edit = createEditFileTool({ workspace });
    const search = createSearchFilesTool({ workspace, useRipgrep: false });
    for (const spelling of [".env", ".env/", "./.env/.", "sub/../.env", `${ws}/.env`, "harmless.txt"]) {
      const results = [
        await call(read, { path: spelling }),
        await call(write, { path: spelling, content: "x" }),
        await call(edit, { path: spelling, old_text: "sk", new_text: "x" }),
        await call(search, { pattern: "sk", path: spelling }),
      ];
      for (const result of results) {
        expect(result.ok, spelling).toBe(false);
        expect(result.output).toMatch(/off limits to the file tools: it is an environment secrets file/);
        expect(result.output).not.toContain("sk-live");
      }
    }
    expect(await readFile(path.join(ws, ".env"), "utf8")).toBe("OPENAI_API_KEY=sk-live-123\n");
    await writeFile(path.join(ws, ".env.example"), "OPENAI_API_KEY=\n");
    expect((await call(read, { path: ".env.example" })).ok).toBe(true);
  });

  it("refuses key files and credential stores, and listing inside .ssh", async () => {
    await mkdir(path.join(ws, ".ssh"));
    await writeFile(path.join(ws, ".ssh/id_ed25519"), "KEY");
    await writeFile(path.join(ws, "deploy.pem"), "KEY");
    await mkdir(path.join(ws, ".aws"));
    await writeFile(path.join(ws, ".aws/credentials"), "aws_secret_access_key=KEY");
    const read = createReadFileTool({ workspace });
    for (const file of [".ssh/id_ed25519", "deploy.pem", ".aws/credentials", ".aws/../.aws/credentials"]) {
      expect((await call(read, { path: file })).output).toMatch(/off limits/);
    }
    expect((await call(createListFilesTool({ workspace }), { path: ".ssh" })).output).toMatch(/off limits/);
  });
});

describe.each([
  { engine: "ripgrep", useRipgrep: true },
  { engine: "JS fallback", useRipgrep: false },
])("search_files skips credential files ($engine)", ({ useRipgrep }) => {
  it("returns no line from .env, keys or credential stores, and they do not use up the limit", async () => {
    await mkdir(path.join(ws, "src"));
    await mkdir(path.join(ws, ".ssh"));
    await mkdir(path.join(ws, "config"));
    await writeFile(path.join(ws, ".env"), "TOKEN=from-dotenv\n");
    await writeFile(path.join(ws, "config/.env.production"), "TOKEN=from-prod\n");
    await writeFile(path.join(ws, ".ssh/id_rsa"), "TOKEN=from-key\n");
    await writeFile(path.join(ws, "server.key"), "TOKEN=from-keyfile\n");
    await writeFile(path.join(ws, ".npmrc"), "TOKEN=from-npmrc\n");
    await writeFile(path.join(ws, "src/app.ts"), "const TOKEN = process.env.TOKEN;\n");
    await writeFile(path.join(ws, ".env.example"), "TOKEN=\n");
    const tool = createSearchFilesTool({ workspace, useRipgrep, maxResults: 2 });
    expect(await call(tool, { pattern: "TOKEN" })).toEqual({
      ok: true,
      output: ".env.example:1: TOKEN=\nsrc/app.ts:1: const TOKEN = process.env.TOKEN;",
    });
    expect((await call(tool, { pattern: "from-" })).output).toBe("No matches for /from-/ in ..");
  });
});

describe("JS search cannot block the event loop", () => {
  it("runs (a+)+$ on long lines in linear time while the service keeps answering", async () => {
    const line = `${"a".repeat(15_000)}b`;
    await writeFile(path.join(ws, "long.txt"), Array.from({ length: 150 }, () => line).join("\n"));
    const server = http.createServer((_req, res) => res.end("pong"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const tool = createSearchFilesTool({
        workspace,
        useRipgrep: false,
        jsLimits: { maxLineChars: 20_000 },
      });
      let searchDone = false;
      const searching = call(tool, { pattern: "(a+)+$" }).then((result) => {
        searchDone = true;
        return result;
      });
      const { port } = server.address() as AddressInfo;
      const pong = await fetch(`http://127.0.0.1:${port}/`).then((response) => response.text());
      const answeredDuringSearch = !searchDone;
      expect(pong).toBe("pong");
      expect(answeredDuringSearch).toBe(true);
      expect(await searching).toEqual({ ok: true, output: "No matches for /(a+)+$/ in .." });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("stops at its time limit with a clear error", async () => {
    await writeFile(
      path.join(ws, "long.txt"),
      Array.from({ length: 400 }, () => `${"a".repeat(5000)}b`).join("\n"),
    );
    const tool = createSearchFilesTool({
      workspace,
      useRipgrep: false,
      jsLimits: { timeLimitMs: 1, sliceMs: 0 },
    });
    expect(await call(tool, { pattern: "(a+)+$" })).toEqual({
      ok: false,
      output: expect.stringMatching(/^search failed: the search took longer than 1 ms and was stopped/),
    });
  });

  it("matches ripgrep's syntax and refuses what RE2 does not support", async () => {
    await writeFile(path.join(ws, "a.txt"), "Version 12\nversion x\n");
    const tool = createSearchFilesTool({ workspace, useRipgrep: false });
    expect((await call(tool, { pattern: "(?i)version \\d+" })).output).toBe("a.txt:1: Version 12");
    expect((await call(tool, { pattern: "(a)\\1" })).output).toMatch(
      /^search failed: invalid regular expression/,
    );
  });
});

describe("hard links and atomic writes", () => {
  it("refuses to write or edit through a hard link to an outside file", async () => {
    await link(path.join(outside, "secret.txt"), path.join(ws, "linked.txt"));
    const write = await call(createWriteFileTool({ workspace }), { path: "linked.txt", content: "pwned" });
    const edit = await call(createEditFileTool({ workspace }), {
      path: "linked.txt",
      old_text: "OUTSIDE",
      new_text: "pwned",
    });
    for (const result of [write, edit]) {
      expect(result.ok).toBe(false);
      expect(result.output).toMatch(/linked\.txt has 2 hard links, .* refusing to write through it/);
    }
    expect(await readFile(path.join(outside, "secret.txt"), "utf8")).toBe("OUTSIDE SECRET\n");
  });

  it("replaces a file via rename (new inode, same mode) and leaves no temporary file", async () => {
    await writeFile(path.join(ws, "run.sh"), "echo old\n", { mode: 0o750 });
    const before = await stat(path.join(ws, "run.sh"));
    const result = await call(createEditFileTool({ workspace }), {
      path: "run.sh",
      old_text: "old",
      new_text: "new",
    });
    expect(result.ok).toBe(true);
    const after = await stat(path.join(ws, "run.sh"));
    expect(after.ino).not.toBe(before.ino);
    expect(after.mode & 0o777).toBe(0o750);
    expect(await readFile(path.join(ws, "run.sh"), "utf8")).toBe("echo new\n");
    const listing = await call(createListFilesTool({ workspace }), {});
    expect(listing.output).toBe("workspace root:\nrun.sh");
  });

  it("refuses FIFOs instead of hanging on them", async () => {
    const { execFileSync } = await import("node:child_process");
    execFileSync("mkfifo", [path.join(ws, "pipe")]);
    expect((await call(createReadFileTool({ workspace }), { path: "pipe" })).output).toMatch(
      /not a regular file/,
    );
  });
});

/** A worker that keeps swapping `ws/dir` between a real folder and a symlink to `outside`. */
function startSwapper(workspace: string, target: string): { stop: () => Promise<number> } {
  const worker = new Worker(
    `
    const { parentPort, workerData } = require("node:worker_threads");
    const fs = require("node:fs");
    const { dir, parked, target } = workerData;
    let stop = false, swaps = 0;
    parentPort.on("message", () => { stop = true; });
    const loop = () => {
      for (let i = 0; i < 200 && !stop; i++) {
        fs.renameSync(dir, parked);
        fs.symlinkSync(target, dir);
        fs.unlinkSync(dir);
        fs.renameSync(parked, dir);
        swaps++;
      }
      if (stop) parentPort.postMessage(swaps); else setImmediate(loop);
    };
    loop();
    `,
    {
      eval: true,
      workerData: { dir: path.join(workspace, "dir"), parked: path.join(workspace, "parked"), target },
    },
  );
  return {
    stop: () =>
      new Promise((resolve) => {
        worker.once("message", (swaps: number) => {
          void worker.terminate();
          resolve(swaps);
        });
        worker.postMessage("stop");
      }),
  };
}

describe("swap race", () => {
  it("10,000 read_file calls while a folder is swapped with an outside symlink: 0 outside reads", async () => {
    await mkdir(path.join(ws, "dir"));
    await writeFile(path.join(ws, "dir/secret.txt"), "inside\n");
    const read = createReadFileTool({ workspace });
    const swapper = startSwapper(ws, outside);
    const outcomes = { inside: 0, outside: 0, refused: 0 };
    try {
      for (let batch = 0; batch < 1000; batch += 1) {
        const results = await Promise.all(
          Array.from({ length: 10 }, () => call(read, { path: "dir/secret.txt" })),
        );
        for (const result of results) {
          if (result.output.includes("OUTSIDE")) outcomes.outside += 1;
          else if (result.ok) outcomes.inside += 1;
          else outcomes.refused += 1;
        }
      }
    } finally {
      const swaps = await swapper.stop();
      expect(swaps).toBeGreaterThan(0);
    }
    expect(outcomes.outside).toBe(0);
    expect(outcomes.inside + outcomes.refused).toBe(10_000);
  }, 120_000);

  it.each([
    { engine: "ripgrep", useRipgrep: true },
    { engine: "JS fallback", useRipgrep: false },
  ])(
    "search_files ($engine) and list_files under the same swaps: 0 outside hits",
    async ({ useRipgrep }) => {
      await mkdir(path.join(ws, "dir"));
      await writeFile(path.join(ws, "dir/secret.txt"), "inside SECRET\n");
      await writeFile(path.join(outside, "only-outside.txt"), "x\n");
      const search = createSearchFilesTool({ workspace, useRipgrep });
      const list = createListFilesTool({ workspace });
      const swapper = startSwapper(ws, outside);
      let outsideHits = 0;
      try {
        for (let round = 0; round < 300; round += 1) {
          const [found, listed] = await Promise.all([
            call(search, { pattern: "SECRET", path: "dir" }),
            call(list, { path: "dir" }),
          ]);
          if (found.output.includes("OUTSIDE") || listed.output.includes("only-outside")) outsideHits += 1;
        }
      } finally {
        await swapper.stop();
      }
      expect(outsideHits).toBe(0);
    },
    120_000,
  );
});
