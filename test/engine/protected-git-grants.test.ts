/**
 * A read-only git command allowed without a person runs in its protected form whichever rule
 * allows it: a configured prefix, an "always this command" grant or the read-only grant. A
 * repository's config can name programs git runs (core.fsmonitor on `git status`), and a config
 * planted by an earlier write must not run them with no one asked.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { GrantSet } from "../../src/engine/permissions/grants.js";
import { PermissionEngine } from "../../src/engine/permissions/permission-engine.js";
import { freshFacts, RunLog, testRegistry } from "./helpers/test-tools.js";

const runCommand = testRegistry(new RunLog()).get("run_command")!;
let repo: string | undefined;
afterEach(() => {
  if (repo) rmSync(repo, { recursive: true, force: true });
  repo = undefined;
});

/** A repository whose config names a program for `git status` to run (touching PLANTED). */
function plantedRepo(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "protected-git-"));
  execFileSync("git", ["init", "-q"], { cwd: dir });
  writeFileSync(
    path.join(dir, ".git", "config"),
    '[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "touch PLANTED; false"\n',
  );
  return dir;
}

const RULES = [
  { rule: "allowed_prefix", prefixes: ["git status"], grants: new GrantSet([]) },
  { rule: "grant:command", prefixes: [], grants: new GrantSet([{ kind: "command", command: "git status" }]) },
  { rule: "grant:readonly_session", prefixes: [], grants: new GrantSet([{ kind: "readonly_session" }]) },
  { rule: "grant:tool", prefixes: [], grants: new GrantSet([{ kind: "tool", tool: "run_command" }]) },
];

describe("read-only git allowed without a person", () => {
  it.each(RULES)(
    "runs without the repository's programs when $rule allows it",
    ({ rule, prefixes, grants }) => {
      repo = plantedRepo();
      const engine = new PermissionEngine({ allowedCommandPrefixes: prefixes, hardDenyPatterns: [] });
      const decision = engine.decide(
        runCommand,
        { command: "git status" },
        {
          mode: "interactive",
          grants,
          facts: freshFacts(),
          provenance: { kind: "user" },
        },
      );
      expect(decision).toMatchObject({ action: "allow", rule });
      const line = String(decision.runArgs?.command ?? "git status");
      execFileSync("bash", ["-c", `${line} >/dev/null 2>&1 || true`], { cwd: repo });
      expect(existsSync(path.join(repo, "PLANTED"))).toBe(false);
      // The planted program is real: plain git runs it.
      execFileSync("bash", ["-c", "git status >/dev/null 2>&1 || true"], { cwd: repo });
      expect(existsSync(path.join(repo, "PLANTED"))).toBe(true);
    },
  );

  it("leaves a command that is not read-only as it was written (a prefix an admin chose)", () => {
    const engine = new PermissionEngine({ allowedCommandPrefixes: ["git commit"], hardDenyPatterns: [] });
    const decision = engine.decide(
      runCommand,
      { command: "git commit -m x" },
      {
        mode: "interactive",
        grants: new GrantSet([]),
        facts: freshFacts(),
        provenance: { kind: "user" },
      },
    );
    expect(decision).toMatchObject({ action: "allow", rule: "allowed_prefix" });
    expect(decision.runArgs).toBeUndefined();
  });
});
