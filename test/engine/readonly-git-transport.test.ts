/**
 * A read-only git command allowed by the read-only grant must start no transport. In a partial
 * clone (`--filter=blob:none`) reading a missing blob makes git fetch it from the promisor
 * remote, and that fetch runs what the repository's own (attacker-writable) config names:
 * `remote.<name>.uploadpack`, `core.sshCommand`, an `ext::` URL, a remote helper
 * (`remote.<name>.vcs`), which git looks up as `git remote-<vcs>` — an alias of that name, or one
 * `help.autocorrect` takes for it. Each case also runs with GIT_NO_LAZY_FETCH left out, as on a
 * git that does not know it. The line runs here as Coworker runs it: the permission
 * engine's decision, then the real run_command (unsandboxed, so only git's protection holds).
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GrantSet } from "../../src/engine/permissions/grants.js";
import { PermissionEngine } from "../../src/engine/permissions/permission-engine.js";
import { createWorkspacePaths } from "../../src/tools/files/workspace-paths.js";
import { createRunCommandTool } from "../../src/tools/shell/run-command.js";
import { unsandboxedBackend } from "../../src/tools/shell/sandbox-backend.js";
import { call, tempDir } from "../tools/support/tool-context.js";
import { freshFacts, RunLog, testRegistry } from "./helpers/test-tools.js";

let base: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir: base, cleanup } = await tempDir("git-lazy-fetch-"));
});
afterEach(async () => {
  await cleanup();
});

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.email=a@b", "-c", "user.name=a", ...args], { cwd, stdio: "pipe" });

/**
 * A partial clone (base/clone) of a two-commit repository, missing the first commit's blob, and
 * base/planted: a program that leaves base/ran-<its first argument> and fails.
 */
async function partialClone(): Promise<string> {
  const source = path.join(base, "source");
  git(base, "init", "-q", source);
  await writeFile(path.join(source, "f.txt"), "one\n");
  git(source, "add", "f.txt");
  git(source, "commit", "-qm", "one");
  await writeFile(path.join(source, "f.txt"), "two\n");
  git(source, "commit", "-qam", "two");
  git(source, "config", "uploadpack.allowFilter", "true");
  git(base, "clone", "-q", "--filter=blob:none", `file://${source}`, "clone");
  await writeFile(path.join(base, "planted"), `#!/bin/sh\ntouch "${base}/ran-$1"\nexit 1\n`);
  await chmod(path.join(base, "planted"), 0o755);
  return path.join(base, "clone");
}

/** The line the read-only grant lets run unasked, exactly as the engine hands it on. */
function protectedLine(command: string): string {
  const engine = new PermissionEngine({ allowedCommandPrefixes: [], hardDenyPatterns: [] });
  const decision = engine.decide(
    testRegistry(new RunLog()).get("run_command")!,
    { command },
    {
      mode: "interactive",
      grants: new GrantSet([{ kind: "readonly_session" }]),
      facts: freshFacts(),
      provenance: { kind: "user" },
    },
  );
  expect(decision).toMatchObject({ action: "allow", rule: "grant:readonly_session" });
  return String(decision.runArgs?.command);
}

const run = (workspace: string, command: string) =>
  call(
    createRunCommandTool({ paths: createWorkspacePaths({ root: workspace }), sandbox: unsandboxedBackend() }),
    { command },
  );

/** The value the protected line gives GIT_ALLOW_PROTOCOL (a remote helper may be named after it). */
const allowedProtocol = (line: string) => /(?:^| )GIT_ALLOW_PROTOCOL=(\S*) /.exec(line)?.[1] ?? "";

const PLANTS: ReadonlyArray<{ name: string; config: (planted: string, line: string) => string[][] }> = [
  { name: "uploadpack", config: (p) => [["remote.origin.uploadpack", `${p} uploadpack`]] },
  {
    name: "ssh",
    config: (p) => [
      ["remote.origin.url", "ssh://example.invalid/repo"],
      ["core.sshCommand", `${p} ssh`],
    ],
  },
  {
    name: "ext",
    config: (p) => [
      ["protocol.allow", "always"],
      ["protocol.ext.allow", "always"],
      ["remote.origin.url", `ext::${p} ext`],
    ],
  },
  {
    // git runs a remote helper as `git remote-<name>`: an alias when one has that name. An empty
    // GIT_ALLOW_PROTOCOL allows the helper "" (`remote.origin.vcs=`), so `alias.remote-` runs.
    name: "alias",
    config: (p) => [
      ["remote.origin.vcs", ""],
      ["alias.remote-", `!${p} alias`],
    ],
  },
  {
    // The helper named like the allowed protocol, through autocorrect: an alias one letter off
    // runs in place of the missing `git remote-<name>`.
    name: "autocorrect",
    config: (p, line) => [
      ["remote.origin.vcs", allowedProtocol(line)],
      [`alias.remote-${allowedProtocol(line).replaceAll("_", "-")}`, `!${p} autocorrect`],
      ["help.autocorrect", "-1"],
    ],
  },
];

describe("read-only git in a partial clone", () => {
  it.each(PLANTS)("fetches no missing blob through a planted $name", async ({ name, config }) => {
    const clone = await partialClone();
    const command = "git log -p";
    const line = protectedLine(command);
    for (const [key, value] of config(path.join(base, "planted"), line))
      git(clone, "config", key as string, value as string);
    const ran = path.join(base, `ran-${name}`);

    // As it runs, and as it runs on a git without GIT_NO_LAZY_FETCH (before 2.39.4/2.45):
    // there only GIT_ALLOW_PROTOCOL and the -c options stand in the way.
    for (const form of [line, line.replace("GIT_NO_LAZY_FETCH=1 ", "")]) {
      const result = await run(clone, form);
      expect(existsSync(ran), `${form}\n${result.output}`).toBe(false);
      // It fails closed: git stops at the blob it may not fetch.
      expect(result.ok).toBe(false);
    }

    // The planted program is real: the same read unprotected runs it.
    await run(clone, command);
    expect(existsSync(ran)).toBe(true);
  });

  it("allows a protocol no alias can be named after (a config key has no `_`)", async () => {
    const clone = await partialClone();
    const allowed = allowedProtocol(protectedLine("git status"));
    expect(() => git(clone, "config", `alias.remote-${allowed}`, "!true")).toThrow();
  });

  it("still shows what the clone holds", async () => {
    const clone = await partialClone();
    const result = await run(clone, protectedLine("git show HEAD:f.txt"));
    expect(result).toMatchObject({ ok: true, output: "two\n[exit code 0]" });
  });
});
