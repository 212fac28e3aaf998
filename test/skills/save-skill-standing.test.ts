/**
 * What save_skill says of where the saved skill stands: under a name the data dir or `skills.dirs`
 * holds, the card and the result say the operator's skill hides it (and `skills` lists it as
 * hidden); over a name an approver switched off, the result says it is off; with the store out of
 * reach, the card is still shown and the result says the skill is saved, its standing unknown.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  fixtureSkills,
  runSkillsCommand,
  SKILL_CALL_CONTEXT,
  skillMd,
  skillsFixture,
  writeSkill,
} from "./support.js";

let fixture: Awaited<ReturnType<typeof skillsFixture>>;
afterEach(async () => fixture?.cleanup());

const BOSS = { approvers: ["slack:U_BOSS"] };

describe("save_skill's word on where the skill stands", () => {
  it("says a skill saved under a name the data dir holds is hidden, and lists it as such", async () => {
    fixture = await skillsFixture();
    writeSkill(fixture.dataSkills, "triage", skillMd("triage", "Operator triage", "OPERATOR STEPS"));
    const skills = await fixtureSkills(fixture, BOSS);
    const save = skills.tools.find((tool) => tool.name === "save_skill")!;
    const args = { name: "triage", description: "Team triage", instructions: "TEAM STEPS" };
    expect((await save.preview!(args, SKILL_CALL_CONTEXT)).summary).toContain(
      'it will be hidden: the data dir\'s skill "triage" is the one listed and loaded',
    );
    const result = await save.execute(args, SKILL_CALL_CONTEXT);
    expect(result.ok).toBe(true);
    expect(result.output).toContain(
      'It is hidden: the data dir\'s skill "triage" is the one listed and loaded',
    );
    expect(result.output).not.toContain("in the catalog");
    expect(await runSkillsCommand(skills, "U_ANA", [])).toContain(
      '• triage — hidden: The workspace\'s skill "triage" is shadowed by the data dir one',
    );
    skills.close();
  });

  it("says a skill of skills.dirs hides it too", async () => {
    fixture = await skillsFixture();
    writeSkill(fixture.extra, "triage", skillMd("triage", "Configured triage"));
    const skills = await fixtureSkills(fixture, BOSS);
    const save = skills.tools.find((tool) => tool.name === "save_skill")!;
    const result = await save.execute(
      { name: "triage", description: "d", instructions: "x" },
      SKILL_CALL_CONTEXT,
    );
    expect(result.output).toContain('It is hidden: the skills.dirs\'s skill "triage"');
    skills.close();
  });

  it("says a skill saved over a name an approver switched off is off", async () => {
    fixture = await skillsFixture();
    const skills = await fixtureSkills(fixture, BOSS);
    await skills.library.switches.set("weekly", false);
    const save = skills.tools.find((tool) => tool.name === "save_skill")!;
    const result = await save.execute(
      { name: "weekly", description: "d", instructions: "x" },
      SKILL_CALL_CONTEXT,
    );
    expect(result.output).toContain(
      "It is switched off for this workspace: a configured approver turns it on with `skills enable weekly`.",
    );
    expect(skills.library.catalog(await skills.library.scan())).toBeUndefined();
    skills.close();
  });

  it("says a skill saved under a free name is in the catalog", async () => {
    fixture = await skillsFixture();
    const skills = await fixtureSkills(fixture, BOSS);
    const save = skills.tools.find((tool) => tool.name === "save_skill")!;
    const result = await save.execute(
      { name: "weekly", description: "d", instructions: "x" },
      SKILL_CALL_CONTEXT,
    );
    expect(result.output).toContain("It is in the catalog from the next turn.");
    skills.close();
  });

  it("says a skill is saved when the store cannot be reached for its place in the catalog", async () => {
    fixture = await skillsFixture();
    writeSkill(fixture.dataSkills, "triage", skillMd("triage", "Operator triage"));
    const skills = await fixtureSkills(fixture, BOSS);
    const save = skills.tools.find((tool) => tool.name === "save_skill")!;
    const args = { name: "weekly", description: "d", instructions: "x" };
    fixture.space.get = async () => {
      throw new Error("store unreachable");
    };
    expect((await save.preview!(args, SKILL_CALL_CONTEXT)).summary).toContain(
      "whether another source's skill of the name would hide it could not be read now",
    );
    const result = await save.execute(args, SKILL_CALL_CONTEXT);
    expect(result.ok).toBe(true);
    expect(result.output).toContain("It is saved; its place in the catalog could not be read now.");
    expect(existsSync(path.join(fixture.workspaceSkills, "weekly", "SKILL.md"))).toBe(true);
    skills.close();
  });
});
