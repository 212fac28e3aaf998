import { mkdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import type { AnyTool, ToolContext } from "../../src/core/tool.js";
import { GrantSet } from "../../src/engine/permissions/grants.js";
import { PermissionEngine } from "../../src/engine/permissions/permission-engine.js";
import { createEditFileTool } from "../../src/tools/files/edit-file.js";
import { steeringPlaces } from "../../src/tools/files/steering-files.js";
import { realpathOfMaybeMissing } from "../../src/tools/files/workspace-paths.js";
import { createWriteFileTool } from "../../src/tools/files/write-file.js";
import { call, makeContext } from "./support/tool-context.js";
import { useTempWorkspace } from "./support/tool-workspace.js";

const temp = useTempWorkspace("steering-");

beforeEach(async () => {
  await mkdir(path.join(temp.dir, ".coworker", "skills", "deploy"), { recursive: true });
  await writeFile(
    path.join(temp.dir, ".coworker", "skills", "deploy", "SKILL.md"),
    "---\nname: deploy\n---\nold\n",
  );
});

/**
 * A context whose re-authorisations go to the permission engine in auto mode with nobody to ask:
 * an ask answers `approve`. Records each changed target put to it.
 */
function engineContext(tool: AnyTool, args: Record<string, unknown>, approve = false) {
  const engine = new PermissionEngine({ allowedCommandPrefixes: [], hardDenyPatterns: [] });
  const base = makeContext({ root: temp.dir });
  const asked: { changed: Readonly<Record<string, unknown>>; hop: string; rule: string }[] = [];
  const context: ToolContext = {
    ...base,
    async reauthorize(changed, hop) {
      const decision = engine.decide(
        tool,
        { ...args, ...changed },
        {
          mode: "auto",
          grants: new GrantSet([{ kind: "tool", tool: tool.name }]),
          facts: base.facts,
          provenance: { kind: "user" },
          request: base.request,
        },
      );
      asked.push({ changed, hop, rule: decision.rule });
      return decision.action === "allow" || (decision.action === "ask" && approve);
    },
  };
  return { context, asked };
}

async function writeThrough(requested: string, approve = false) {
  const tool = createWriteFileTool({ workspace: temp.workspace });
  const args = { path: requested, content: "---\nname: deploy\n---\npwned\n" };
  const { context, asked } = engineContext(tool, args, approve);
  return { result: await call(tool, args, context), asked };
}

const skillText = () => readFile(path.join(temp.dir, ".coworker", "skills", "deploy", "SKILL.md"), "utf8");

describe("a write reaching a steering file through a link", () => {
  it("is put to the engine again as the steering file, which asks; unanswered, nothing is written", async () => {
    await symlink(
      path.join(temp.dir, ".coworker", "skills", "deploy", "SKILL.md"),
      path.join(temp.dir, "notes.md"),
    );
    const { result, asked } = await writeThrough("notes.md");
    expect(asked).toEqual([
      { changed: { path: ".coworker/skills/deploy/SKILL.md" }, hop: "steering-file", rule: "steering_file" },
    ]);
    expect(result).toEqual({
      ok: false,
      output:
        "notes.md is .coworker/skills/deploy/SKILL.md, which steers every later session: writing it needs a person's approval, and it was not given",
    });
    expect(await skillText()).toBe("---\nname: deploy\n---\nold\n");
  });

  it("is written once that card is approved", async () => {
    await symlink(
      path.join(temp.dir, ".coworker", "skills", "deploy", "SKILL.md"),
      path.join(temp.dir, "notes.md"),
    );
    const { result } = await writeThrough("notes.md", true);
    expect(result.ok).toBe(true);
    expect(await skillText()).toContain("pwned");
  });

  it("is caught where a skill's folder or AGENTS.md is a link into the workspace", async () => {
    await mkdir(path.join(temp.dir, "tools", "release"), { recursive: true });
    await mkdir(path.join(temp.dir, "docs"));
    await writeFile(path.join(temp.dir, "docs", "conventions.md"), "be kind\n");
    await symlink(path.join(temp.dir, "docs", "conventions.md"), path.join(temp.dir, "AGENTS.md"));
    await symlink(
      path.join(temp.dir, "tools", "release"),
      path.join(temp.dir, ".coworker", "skills", "release"),
    );
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["tools/release/SKILL.md", ".coworker/skills/release/SKILL.md"],
      ["tools/release/run.sh", ".coworker/skills/release/run.sh"],
      ["docs/conventions.md", "AGENTS.md"],
    ];
    for (const [requested, steering] of cases) {
      const { result, asked } = await writeThrough(requested);
      expect(
        asked.map((a) => a.changed),
        requested,
      ).toEqual([{ path: steering }]);
      expect(result.ok).toBe(false);
    }
    expect(await readFile(path.join(temp.dir, "docs", "conventions.md"), "utf8")).toBe("be kind\n");
  });

  it("is caught where a plain skill folder's SKILL.md is a link into the workspace", async () => {
    await mkdir(path.join(temp.dir, "docs"));
    await writeFile(path.join(temp.dir, "docs", "lint.md"), "lint");
    await mkdir(path.join(temp.dir, ".coworker", "skills", "lint"));
    await symlink(
      path.join(temp.dir, "docs", "lint.md"),
      path.join(temp.dir, ".coworker", "skills", "lint", "SKILL.md"),
    );
    const { result, asked } = await writeThrough("docs/lint.md");
    expect(asked.map((a) => a.changed)).toEqual([{ path: ".coworker/skills/lint/SKILL.md" }]);
    expect(result.ok).toBe(false);
    expect(await readFile(path.join(temp.dir, "docs", "lint.md"), "utf8")).toBe("lint");
  });

  it("is caught where .coworker/skills is a link into the workspace", async () => {
    await rm(path.join(temp.dir, ".coworker", "skills"), { recursive: true });
    await mkdir(path.join(temp.dir, "docs", "skills", "lint"), { recursive: true });
    await writeFile(path.join(temp.dir, "docs", "skills", "lint", "SKILL.md"), "lint");
    await symlink(path.join(temp.dir, "docs", "skills"), path.join(temp.dir, ".coworker", "skills"));
    const { result, asked } = await writeThrough("docs/skills/lint/SKILL.md");
    expect(asked.map((a) => a.changed)).toEqual([{ path: ".coworker/skills/lint/SKILL.md" }]);
    expect(result.ok).toBe(false);
    expect(await readFile(path.join(temp.dir, "docs", "skills", "lint", "SKILL.md"), "utf8")).toBe("lint");
  });

  it("applies to edit_file too", async () => {
    await symlink(path.join(temp.dir, ".coworker", "skills", "deploy"), path.join(temp.dir, "deploy-skill"));
    const tool = createEditFileTool({ workspace: temp.workspace });
    const args = { path: "deploy-skill/SKILL.md", old_text: "old", new_text: "pwned" };
    const { context, asked } = engineContext(tool, args);
    expect((await call(tool, args, context)).ok).toBe(false);
    expect(asked.map((a) => a.changed)).toEqual([{ path: ".coworker/skills/deploy/SKILL.md" }]);
    expect(await skillText()).toBe("---\nname: deploy\n---\nold\n");
  });

  it("is refused outside the engine, where nobody can be asked", async () => {
    await symlink(
      path.join(temp.dir, ".coworker", "skills", "deploy", "SKILL.md"),
      path.join(temp.dir, "notes.md"),
    );
    const tool = createWriteFileTool({ workspace: temp.workspace });
    expect((await call(tool, { path: "notes.md", content: "x" }, makeContext({ root: temp.dir }))).ok).toBe(
      false,
    );
    expect(await skillText()).toBe("---\nname: deploy\n---\nold\n");
  });
});

describe("a write the engine already saw as a steering file, or no steering file at all", () => {
  it("is not put to the engine again", async () => {
    for (const requested of [
      ".coworker/skills/deploy/SKILL.md",
      "./.coworker/../.coworker/skills/deploy/SKILL.md",
      path.join(temp.dir, ".coworker", "skills", "deploy", "SKILL.md"),
      "AGENTS.md",
      "docs/readme.md",
      "docs/AGENTS.md",
    ]) {
      const { result, asked } = await writeThrough(requested);
      expect(asked, requested).toEqual([]);
      expect(result.ok, requested).toBe(true);
    }
  });
});

describe("steeringPlaces", () => {
  // Plain skill folders skip the full lookup (only links are resolved); every place must still be
  // where a full real-path lookup of its spelling leads.
  it("puts every place where a full real-path lookup of its spelling leads, links or not", async () => {
    const skills = path.join(temp.dir, ".coworker", "skills");
    await mkdir(path.join(temp.dir, "docs", "release"), { recursive: true });
    await writeFile(path.join(temp.dir, "docs", "lint.md"), "lint");
    await mkdir(path.join(skills, "lint"));
    await symlink(path.join(temp.dir, "docs", "lint.md"), path.join(skills, "lint", "SKILL.md"));
    await mkdir(path.join(skills, "dangling"));
    await symlink(path.join(temp.dir, "docs", "missing.md"), path.join(skills, "dangling", "SKILL.md"));
    await mkdir(path.join(skills, "empty"));
    await symlink(path.join(temp.dir, "docs", "release"), path.join(skills, "release"));
    await writeFile(path.join(skills, "stray.txt"), "not a skill");
    await symlink(path.join(temp.dir, "docs", "conventions.md"), path.join(temp.dir, "AGENTS.md"));

    const places = await steeringPlaces(temp.dir);
    const expected = await Promise.all(
      places.map(async (place) => ({
        ...place,
        real: await realpathOfMaybeMissing(path.join(temp.dir, ...place.spelling.split("/"))),
      })),
    );
    expect(places).toEqual(expected);
    const spellings = places.map((place) => place.spelling).sort();
    expect(spellings).toEqual(
      [
        ".coworker",
        ".coworker/skills",
        "AGENTS.md",
        ...["dangling", "deploy", "empty", "lint", "release", "stray.txt"].map(
          (n) => `.coworker/skills/${n}`,
        ),
        ...["dangling", "deploy", "empty", "lint", "release", "stray.txt"].map(
          (n) => `.coworker/skills/${n}/SKILL.md`,
        ),
      ].sort(),
    );
    const realOf = (spelling: string) => places.find((place) => place.spelling === spelling)?.real;
    expect(realOf(".coworker/skills/lint/SKILL.md")).toBe(path.join(temp.dir, "docs", "lint.md"));
    expect(realOf(".coworker/skills/dangling/SKILL.md")).toBe(path.join(temp.dir, "docs", "missing.md"));
    expect(realOf(".coworker/skills/release/SKILL.md")).toBe(
      path.join(temp.dir, "docs", "release", "SKILL.md"),
    );
  });
});
