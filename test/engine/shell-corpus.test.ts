import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compileHardDenyRules, matchHardDeny } from "../../src/engine/permissions/hard-deny.js";
import { classifyReadOnly } from "../../src/engine/permissions/readonly-command.js";
import {
  HARD_DENIED,
  ISSUE_BYPASSES,
  NOT_HARD_DENIED,
  OTHER_PROGRAMS,
  PROGRAM_ABUSES,
  READ_ONLY,
  SHELL_TRICKS,
} from "./fixtures/shell-corpus.js";

const rules = compileHardDenyRules([]);
const NOT_READ_ONLY = [...ISSUE_BYPASSES, ...PROGRAM_ABUSES, ...OTHER_PROGRAMS, ...SHELL_TRICKS];

describe("the adversarial corpus", () => {
  it("holds at least 300 commands that must not pass, without duplicates", () => {
    const all = [...NOT_READ_ONLY, ...HARD_DENIED];
    expect(all.length).toBeGreaterThanOrEqual(300);
    expect(new Set(NOT_READ_ONLY).size).toBe(NOT_READ_ONLY.length);
    expect(new Set(HARD_DENIED).size).toBe(HARD_DENIED.length);
  });

  it.each(NOT_READ_ONLY)("never classifies %j as read-only", (command) => {
    expect(classifyReadOnly(command).readOnly).toBe(false);
  });

  it.each(HARD_DENIED)("hard-denies %j", (command) => {
    expect(matchHardDeny(rules, { command })).toBeDefined();
  });

  it.each(NOT_HARD_DENIED)("does not hard-deny the near miss %j", (command) => {
    expect(matchHardDeny(rules, { command })).toBeUndefined();
  });

  it.each(READ_ONLY)("keeps %j read-only", (command) => {
    expect(classifyReadOnly(command).readOnly).toBe(true);
  });
});

describe("read-only git runs with its programs switched off", () => {
  const PROTECTION =
    "git -c core.fsmonitor= -c core.hooksPath=/dev/null -c log.showSignature=false -c gpg.program=false " +
    "-c gpg.ssh.program=false -c gpg.x509.program=false --no-pager --no-optional-locks";

  it("injects the protective options, and the diff switches where git diffs", () => {
    expect(classifyReadOnly("git status")).toEqual({ readOnly: true, command: `${PROTECTION} status` });
    expect(classifyReadOnly("git diff --stat && git log -1 | head")).toEqual({
      readOnly: true,
      command: `${PROTECTION} diff --no-ext-diff --no-textconv --stat && ${PROTECTION} log --no-ext-diff --no-textconv -1 | head`,
    });
    expect(classifyReadOnly("git -C 'my dir' grep -n 'a b' 2>/dev/null")).toEqual({
      readOnly: true,
      command: `${PROTECTION} -C 'my dir' grep --no-textconv -n 'a b' 2>/dev/null`,
    });
    expect(classifyReadOnly("ls -la")).toEqual({ readOnly: true, command: "ls -la" });
  });

  describe("against a repository whose .git/config plants programs", () => {
    let repo: string;
    const marker = (name: string) => path.join(repo, `..${path.basename(repo)}-${name}`);
    beforeAll(async () => {
      repo = await mkdtemp(path.join(tmpdir(), "git-planted-"));
      const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, stdio: "pipe" });
      git("init", "-q");
      await writeFile(path.join(repo, "f.txt"), "one\n");
      git("add", "f.txt");
      git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "init");
      await writeFile(path.join(repo, "f.txt"), "two\n");
      await writeFile(path.join(repo, ".gitattributes"), "*.txt diff=evil\n");
      git("config", "core.fsmonitor", `touch ${marker("fsmonitor")}; false`);
      git("config", "diff.external", `sh -c 'touch ${marker("external")}'`);
      git("config", "diff.evil.textconv", `sh -c 'touch ${marker("textconv")}; cat "$0"'`);
      git("config", "core.pager", `sh -c 'touch ${marker("pager")}; cat'`);
      git("config", "log.showSignature", "true");
      git("config", "gpg.program", `sh -c 'touch ${marker("gpg")}'`);
    });
    afterAll(async () => {
      await rm(repo, { recursive: true, force: true });
      for (const name of ["fsmonitor", "external", "textconv", "pager", "gpg"])
        await rm(marker(name), { force: true });
    });

    it("git status / diff / log / show / blame / grep as classified run none of them", () => {
      for (const command of [
        "git status",
        "git diff",
        "git log -p -1",
        "git show",
        "git blame f.txt",
        "git grep two",
      ]) {
        const verdict = classifyReadOnly(command);
        if (!verdict.readOnly) throw new Error(`${command} should be read-only`);
        execFileSync("bash", ["-c", verdict.command], {
          cwd: repo,
          stdio: "pipe",
          env: { PATH: process.env.PATH },
        });
      }
      for (const name of ["fsmonitor", "external", "textconv", "pager", "gpg"]) {
        expect(existsSync(marker(name)), name).toBe(false);
      }
      // The planted programs are real: unprotected, git status runs the fsmonitor.
      execFileSync("bash", ["-c", "git status"], { cwd: repo, stdio: "pipe" });
      expect(existsSync(marker("fsmonitor"))).toBe(true);
    });
  });
});
