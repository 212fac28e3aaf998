/**
 * The doctor's skills check: passes listing each skill with its source (and a config disable),
 * notes a shadowed one, and warns — without failing — naming each malformed SKILL.md and why.
 */
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { skillsCheck } from "../../src/cli/doctor-skills-check.js";
import { skillMd, skillsFixture, writeSkill } from "./support.js";

let fixture: Awaited<ReturnType<typeof skillsFixture>>;
afterEach(async () => fixture?.cleanup());

function config(disabled: string[] = []) {
  return {
    workspace: { root: fixture.workspace, extra_roots: [] },
    data_dir: fixture.dataDir,
    skills: { dirs: [fixture.extra], enabled: [], disabled, catalog_budget_tokens: 2_000 },
  };
}

describe("doctor: skills", () => {
  it("lists skills by source and shadowing", async () => {
    fixture = await skillsFixture();
    writeSkill(fixture.workspaceSkills, "triage", skillMd("triage", "ws"));
    writeSkill(fixture.extra, "triage", skillMd("triage", "extra"));
    writeSkill(fixture.dataSkills, "report", skillMd("report", "data"));
    const result = await skillsCheck(config(["report"])).run(new AbortController().signal);
    expect(result.status).toBe("pass");
    expect(result.summary).toMatch(/^2 skills in /);
    expect(result.notes).toEqual([
      `report (data dir, disabled in config): ${path.join(fixture.dataSkills, "report")}`,
      `triage (skills.dirs): ${path.join(fixture.extra, "triage")}`,
      `triage: ${path.join(fixture.workspaceSkills, "triage")} is shadowed by ${path.join(fixture.extra, "triage")}`,
    ]);
  });

  it("warns with the file and reason of each malformed skill", async () => {
    fixture = await skillsFixture();
    writeSkill(fixture.workspaceSkills, "broken", "---\nname: broken\n---\n");
    const result = await skillsCheck(config()).run(new AbortController().signal);
    expect(result.status).toBe("warn");
    expect(result.summary).toContain("1 malformed (skipped)");
    expect(result.notes).toContain(
      `malformed: ${path.join(fixture.workspaceSkills, "broken", "SKILL.md")} — the front matter needs a \`description\``,
    );
  });
});
