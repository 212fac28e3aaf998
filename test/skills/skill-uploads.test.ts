/**
 * The workspace's skills never reach uploads/: skills are shared by the whole workspace and read
 * for whichever conversation asks, while each conversation's uploads are its own. A skill folder
 * that is a link into a conversation's uploads (holding a SKILL.md someone sent) is not loaded but
 * reported with why, also when the skills folder itself is a link to uploads/; and a file beside a
 * skill that is a link into uploads is neither listed nor read by load_skill — the asking
 * conversation's own uploads included, as a skill is no conversation's.
 */
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { uploadFolderOf } from "../../src/core/upload-folders.js";
import { createLoadSkillTool } from "../../src/skills/load-skill-tool.js";
import { TARGET } from "../support/engine-fixtures.js";
import { skillMd, skillsFixture, writeSkill, SKILL_CALL_CONTEXT } from "./support.js";

let fixture: Awaited<ReturnType<typeof skillsFixture>>;
afterEach(async () => fixture?.cleanup());

const context = SKILL_CALL_CONTEXT;

/** Another conversation's upload folder in the fixture's workspace, with a SKILL.md and a file. */
function theirUploads(): string {
  const folder = path.join(
    fixture.workspace,
    uploadFolderOf({ ...TARGET, channel: "D_SOMEONE_ELSE", thread: undefined }),
  );
  mkdirSync(folder, { recursive: true });
  writeFileSync(path.join(folder, "SKILL.md"), skillMd("kit", "A kit they sent"));
  writeFileSync(path.join(folder, "payroll.csv"), "ALICE,100000\n");
  return folder;
}

describe("workspace skills and uploads", () => {
  it("does not load a skill folder linked into another conversation's uploads", async () => {
    fixture = await skillsFixture();
    mkdirSync(fixture.workspaceSkills, { recursive: true });
    symlinkSync(theirUploads(), path.join(fixture.workspaceSkills, "kit"));
    const scan = await fixture.library.scan();
    expect(scan.skills.has("kit")).toBe(false);
    expect(scan.problems).toEqual([
      expect.objectContaining({
        reason: expect.stringMatching(/^not read: .*nothing under uploads\/ is available here/),
      }),
    ]);
    const tool = createLoadSkillTool(fixture.library);
    for (const args of [{ name: "kit" }, { name: "kit", file: "payroll.csv" }]) {
      const result = await tool.execute(args, context);
      expect(result.ok).toBe(false);
      expect(result.output).not.toContain("payroll");
      expect(result.output).not.toContain("ALICE");
    }
  });

  it("loads nothing from uploads/ when the skills folder is a link to it", async () => {
    fixture = await skillsFixture();
    const uploads = path.join(fixture.workspace, "uploads");
    writeSkill(uploads, "kit", skillMd("kit", "Planted among the uploads"));
    mkdirSync(path.dirname(fixture.workspaceSkills), { recursive: true });
    symlinkSync(uploads, fixture.workspaceSkills);
    const scan = await fixture.library.scan();
    expect(scan.skills.size).toBe(0);
    expect(scan.problems.map((problem) => problem.reason)).toEqual([
      expect.stringMatching(/^not read: .*nothing under uploads\/ is available here/),
    ]);
  });

  it("neither lists nor reads a file beside a skill that links into uploads, the asker's own included", async () => {
    fixture = await skillsFixture();
    const skill = writeSkill(fixture.workspaceSkills, "kit", skillMd("kit", "A kit"), { "notes.md": "fine" });
    const own = path.join(fixture.workspace, uploadFolderOf(TARGET));
    mkdirSync(own, { recursive: true });
    writeFileSync(path.join(own, "mine.csv"), "BOB,1\n");
    symlinkSync(path.join(theirUploads(), "payroll.csv"), path.join(skill, "payroll.csv"));
    symlinkSync(path.join(own, "mine.csv"), path.join(skill, "mine.csv"));
    const tool = createLoadSkillTool(fixture.library);
    const loaded = await tool.execute({ name: "kit" }, context);
    expect(loaded.ok).toBe(true);
    expect(loaded.output).toContain(".coworker/skills/kit/notes.md");
    expect(loaded.output).not.toMatch(/payroll|mine/);
    for (const file of ["payroll.csv", "mine.csv"]) {
      const read = await tool.execute({ name: "kit", file }, context);
      expect(read.ok).toBe(false);
      expect(read.output).toMatch(/nothing under uploads\/ is available here/);
      expect(read.output).not.toMatch(/ALICE|BOB/);
    }
    expect((await tool.execute({ name: "kit", file: "notes.md" }, context)).output).toBe("fine");
  });
});
