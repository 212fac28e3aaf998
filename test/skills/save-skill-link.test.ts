/**
 * save_skill over a skill's folder that is a symbolic link (a repository can commit one, another
 * session's command can make one): the save works in `.coworker/skills/<name>` as named, so it
 * refuses the link — at its card, and at its write when the link appeared after the card — and
 * never moves aside, removes or writes into the folder the link points to.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import type { ToolContext } from "../../src/core/tool.js";
import { createSaveSkillTool } from "../../src/skills/save-skill-tool.js";
import { toolWorkspace } from "../tools/support/tool-workspace.js";
import { skillMd, skillsFixture, SKILL_CALL_CONTEXT, writeSkill } from "./support.js";

let fixture: Awaited<ReturnType<typeof skillsFixture>> | undefined;
afterEach(async () => fixture?.cleanup());

const ARGS = { name: "tooling", description: "d", instructions: "steps" };

/** The workspace's src/ with a file in it. */
function sourceFolder(): string {
  const src = path.join(fixture!.workspace, "src");
  mkdirSync(path.join(src, "lib"), { recursive: true });
  writeFileSync(path.join(src, "lib", "main.ts"), "precious code\n");
  return src;
}

it("a skill's folder that is a link to the workspace's src/: the card and the call refuse it, src/ is untouched", async () => {
  fixture = await skillsFixture();
  const src = sourceFolder();
  mkdirSync(fixture.workspaceSkills, { recursive: true });
  symlinkSync("../../src", path.join(fixture.workspaceSkills, "tooling"));
  const tool = createSaveSkillTool(toolWorkspace({ root: fixture.workspace }));
  await expect(tool.preview!(ARGS, SKILL_CALL_CONTEXT)).rejects.toThrow(
    /\.coworker\/skills\/tooling is a symbolic link.*remove the link/,
  );
  const saved = await tool.execute(ARGS, SKILL_CALL_CONTEXT);
  expect(saved.ok).toBe(false);
  expect(saved.output).toMatch(/not saved: \.coworker\/skills\/tooling is a symbolic link/);
  expect(readdirSync(src)).toEqual(["lib"]);
  expect(readFileSync(path.join(src, "lib", "main.ts"), "utf8")).toBe("precious code\n");
  expect(readdirSync(fixture.workspaceSkills)).toEqual(["tooling"]);
});

it("a skill's folder that is a link to another skill: that skill keeps its files", async () => {
  fixture = await skillsFixture();
  writeSkill(fixture.workspaceSkills, "other", skillMd("other", "theirs"), { "scripts/x.sh": "theirs\n" });
  symlinkSync("other", path.join(fixture.workspaceSkills, "tooling"));
  const saved = await createSaveSkillTool(toolWorkspace({ root: fixture.workspace })).execute(
    ARGS,
    SKILL_CALL_CONTEXT,
  );
  expect(saved.ok).toBe(false);
  const other = path.join(fixture.workspaceSkills, "other");
  expect(readFileSync(path.join(other, "scripts", "x.sh"), "utf8")).toBe("theirs\n");
  expect(readFileSync(path.join(other, "SKILL.md"), "utf8")).toContain("name: other");
});

it("a link made at the skill's name after the card: the approved save refuses it at its write, src/ is untouched", async () => {
  fixture = await skillsFixture();
  const src = sourceFolder();
  writeSkill(fixture.workspaceSkills, "tooling", skillMd("tooling", "old"));
  const tool = createSaveSkillTool(toolWorkspace({ root: fixture.workspace }));
  const preview = await tool.preview!(ARGS, SKILL_CALL_CONTEXT);
  expect(preview.summary).toContain("Replace the existing skill");
  const folder = path.join(fixture.workspaceSkills, "tooling");
  rmSync(folder, { recursive: true });
  symlinkSync("../../src", folder);
  const context = { ...SKILL_CALL_CONTEXT, checkedPreview: preview } as unknown as ToolContext;
  const saved = await tool.execute(ARGS, context);
  expect(saved.ok).toBe(false);
  expect(saved.output).toMatch(/tooling is a symbolic link/);
  expect(readdirSync(src)).toEqual(["lib"]);
  expect(readdirSync(fixture.workspaceSkills)).toEqual(["tooling"]);
});
