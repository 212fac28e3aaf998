/**
 * A `skills.dirs` folder inside a workspace root (or equal to one, or holding one) is refused at
 * load: commands write there without a person's approval, yet operator skills are trusted and
 * shadow the workspace's own. A skills folder outside the workspace loads.
 */
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";

const LOCAL = { OPENAI_BASE_URL: "http://localhost:11434/v1" };
const FIX = "Keep skills.dirs outside the workspace and its extra roots";

const project = () => realpathSync(mkdtempSync(join(tmpdir(), "coworker-skill-roots-")));

function at(cwd: string, yaml: string) {
  writeFileSync(join(cwd, "coworker.yaml"), yaml);
  return loadConfig({ env: LOCAL, cwd, argv: ["-c", "coworker.yaml"] });
}

function refusal(result: ReturnType<typeof loadConfig>): string {
  if (result.ok) throw new Error("expected skills.dirs to be refused, got a valid config");
  return result.problems.join("\n");
}

describe("skills.dirs and the workspace roots", () => {
  it("refuses a skills folder inside the workspace, naming both paths and the fix", () => {
    const cwd = project();
    const text = refusal(at(cwd, "workspace:\n  root: ./ws\nskills:\n  dirs: [./ws/team-skills]\n"));
    expect(text).toContain(
      `skills.dirs[0]: ${join(cwd, "ws", "team-skills")} lies inside the workspace (workspace.root: ${join(cwd, "ws")})`,
    );
    expect(text).toContain("where the agent's commands write without a person's approval");
    expect(text).toContain(FIX);
  });

  it("refuses one equal to an extra root, and one holding the workspace", () => {
    const cwd = project();
    const yaml = `workspace:\n  root: ./top/ws\n  extra_roots: [./shared]\nskills:\n  dirs: [./outside, ./shared, ./top]\n`;
    const text = refusal(at(cwd, yaml));
    expect(text).toContain(
      `skills.dirs[1]: ${join(cwd, "shared")} is the workspace (workspace.extra_roots[0]: ${join(cwd, "shared")})`,
    );
    expect(text).toContain(
      `skills.dirs[2]: ${join(cwd, "top")} contains the workspace (workspace.root: ${join(cwd, "top", "ws")})`,
    );
    expect(text).not.toContain("skills.dirs[0]");
  });

  it("follows links: a link outside that leads into the workspace is refused", () => {
    const cwd = project();
    mkdirSync(join(cwd, "ws", "skills"), { recursive: true });
    symlinkSync(join(cwd, "ws", "skills"), join(cwd, "linked"));
    const text = refusal(at(cwd, "workspace:\n  root: ./ws\nskills:\n  dirs: [./linked]\n"));
    expect(text).toContain(
      `skills.dirs[0]: ${join(cwd, "linked")} → ${join(cwd, "ws", "skills")} lies inside the workspace`,
    );
  });

  it("loads a skills folder outside the workspace", () => {
    const cwd = project();
    const result = at(cwd, "workspace:\n  root: ./ws\nskills:\n  dirs: [./operator-skills]\n");
    if (!result.ok) throw new Error(result.problems.join("\n"));
    expect(result.config.skills.dirs).toEqual([join(cwd, "operator-skills")]);
  });
});
