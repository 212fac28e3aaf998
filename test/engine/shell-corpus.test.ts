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

describe("read-only git runs with its programs and transports switched off", () => {
  const PROTECTION =
    "GIT_ALLOW_PROTOCOL=no_transport GIT_NO_LAZY_FETCH=1 " +
    "git -c core.fsmonitor= -c core.hooksPath=/dev/null -c log.showSignature=false -c gpg.program=false " +
    "-c gpg.ssh.program=false -c gpg.x509.program=false -c diff.submodule=short -c submodule.recurse=false " +
    "-c help.autocorrect=0 --no-pager --no-optional-locks";

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

  describe("against a submodule whose config plants an external diff", () => {
    // `diff.submodule=diff` in the superproject makes git start a `git diff` in each changed
    // submodule; that child has no --no-ext-diff, and only `-c` settings reach it.
    let base: string;
    const ran = () => path.join(base, "external-ran");
    beforeAll(async () => {
      base = await mkdtemp(path.join(tmpdir(), "git-submodule-"));
      const git = (cwd: string, ...args: string[]) =>
        execFileSync(
          "git",
          ["-c", "user.email=a@b", "-c", "user.name=a", "-c", "protocol.file.allow=always", ...args],
          { cwd: path.join(base, cwd), stdio: "pipe" },
        );
      git(".", "init", "-q", "sub");
      await writeFile(path.join(base, "sub", "f"), "a\n");
      git("sub", "add", "f");
      git("sub", "commit", "-qm", "init");
      git(".", "init", "-q", "repo");
      git("repo", "submodule", "add", "-q", "../sub", "sub");
      git("repo", "commit", "-qm", "add sub");
      await writeFile(path.join(base, "repo", "sub", "f"), "b\n");
      git("repo", "config", "diff.submodule", "diff");
      git("repo/sub", "config", "diff.external", `sh -c 'touch ${ran()}'`);
    });
    afterAll(async () => {
      await rm(base, { recursive: true, force: true });
    });

    it("git diff / log -p / show as classified run none of them", () => {
      for (const command of ["git -C repo diff", "git -C repo log -p -1", "git -C repo show"]) {
        const verdict = classifyReadOnly(command);
        if (!verdict.readOnly) throw new Error(`${command} should be read-only`);
        const out = execFileSync("bash", ["-c", verdict.command], {
          cwd: base,
          stdio: "pipe",
          env: { PATH: process.env.PATH },
        });
        expect(existsSync(ran()), command).toBe(false);
        expect(out.toString(), command).toContain("Subproject commit");
      }
      // The planted program is real: with only the old protection, git diff runs it.
      const unprotected = classifyReadOnly("git -C repo diff");
      if (!unprotected.readOnly) throw new Error("git diff should be read-only");
      execFileSync(
        "bash",
        ["-c", unprotected.command.replace(" -c diff.submodule=short -c submodule.recurse=false", "")],
        { cwd: base, stdio: "pipe", env: { PATH: process.env.PATH } },
      );
      expect(existsSync(ran())).toBe(true);
    });
  });
});
