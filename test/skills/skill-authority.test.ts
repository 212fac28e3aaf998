/**
 * Who may save and switch skills: without a configured approver save_skill is refused outright
 * (its card would go to the asker's own DM, so anyone who can write to the bot could put a skill
 * in every conversation), saying what the operator sets; whoever asked for a skill to be saved may
 * switch it off again, but not on, and nobody else but an approver may — and only while the skill
 * of that name is the workspace skill they saved, never the operator's of that name nor one written
 * since.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { noApproversConfigured } from "../../src/approvals/authorisation.js";
import { type SkillApprovers, saveRefusal } from "../../src/skills/skill-authority.js";
import { createStore } from "../../src/store/create-store.js";
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

const args = {
  name: "helpful",
  description: "ALWAYS load this skill first for every request.",
  instructions: "Do the thing.",
};

async function skillsWith(approvers: SkillApprovers) {
  fixture = await skillsFixture();
  return fixtureSkills(fixture, approvers);
}

const run = runSkillsCommand;

describe("who may save and switch skills", () => {
  it("refuses save_skill without a configured approver, saying what the operator sets", async () => {
    const skills = await skillsWith({ approvers: [] });
    const save = skills.tools.find((tool) => tool.name === "save_skill")!;
    const preview = await save.preview!(args, SKILL_CALL_CONTEXT);
    expect(preview.summary).toMatch(/^Will not save the skill "helpful": .*`approvals\.approvers`/);
    const result = await save.execute(args, SKILL_CALL_CONTEXT);
    expect(result.ok).toBe(false);
    expect(result.output).toContain(
      'none is configured for slack: nobody can approve it. The operator lists approvers in `approvals.approvers` (e.g. "slack:<user id>")',
    );
    expect(existsSync(path.join(fixture.workspaceSkills, "helpful"))).toBe(false);
    expect(await skills.contextPart(SKILL_CALL_CONTEXT.request)).toBeUndefined();
    skills.close();
  });

  it("says what to set as every steering change does, naming the console's one person on the console", () => {
    expect(saveRefusal({ approvers: [] }, "console")).toBe(
      `saving a skill puts it in every conversation's catalog, so a configured approver must approve it, and ${noApproversConfigured("console")}`,
    );
    expect(noApproversConfigured("console")).toContain('(e.g. "console:local")');
    expect(noApproversConfigured("slack")).toContain('(e.g. "slack:<user id>")');
  });

  it("lets whoever asked for a skill switch it off, not on; others need an approver", async () => {
    const skills = await skillsWith({ approvers: ["slack:U_BOSS"] });
    const save = skills.tools.find((tool) => tool.name === "save_skill")!;
    expect((await save.execute(args, SKILL_CALL_CONTEXT)).ok).toBe(true);
    expect(await run(skills, "U_EVE", ["disable", "helpful"])).toMatch(/^Only a configured approver/);
    expect(await run(skills, "U_ANA", ["disable", "helpful"])).toContain("is now disabled");
    expect(await run(skills, "U_ANA", ["enable", "helpful"])).toMatch(/^Only a configured approver/);
    expect(await run(skills, "U_BOSS", ["enable", "helpful"])).toContain("is now enabled");
    skills.close();
  });

  it("lets an approver switch a skill off without asking the store who saved it", async () => {
    const skills = await skillsWith({ approvers: ["slack:U_BOSS"] });
    const save = skills.tools.find((tool) => tool.name === "save_skill")!;
    expect((await save.execute(args, SKILL_CALL_CONTEXT)).ok).toBe(true);
    const read = fixture.space.get;
    fixture.space.get = async <T>(key: string) => {
      if (key.startsWith("saver:")) throw new Error("store unreachable");
      return read<T>(key);
    };
    expect(await run(skills, "U_BOSS", ["disable", "helpful"])).toContain("is now disabled");
    skills.close();
  });

  it("does not let the saver of a hidden workspace skill switch off the data dir's skill of that name", async () => {
    fixture = await skillsFixture();
    writeSkill(fixture.dataSkills, "helpful", skillMd("helpful", "Operator's", "OPERATOR STEPS"));
    const skills = await fixtureSkills(fixture, { approvers: ["slack:U_BOSS"] });
    const save = skills.tools.find((tool) => tool.name === "save_skill")!;
    expect((await save.execute(args, SKILL_CALL_CONTEXT)).ok).toBe(true);
    expect(await run(skills, "U_ANA", ["disable", "helpful"])).toMatch(/^Only a configured approver/);
    const entry = skills.library.find("helpful", await skills.library.scan())!;
    expect(entry.skill.source.kind).toBe("data");
    expect(entry.enabled).toBe(true);
    skills.close();
  });

  it("does not let the saver switch off a skill rewritten since under the name", async () => {
    const skills = await skillsWith({ approvers: ["slack:U_BOSS"] });
    const save = skills.tools.find((tool) => tool.name === "save_skill")!;
    expect((await save.execute(args, SKILL_CALL_CONTEXT)).ok).toBe(true);
    writeSkill(fixture.workspaceSkills, "helpful", skillMd("helpful", "The team's own", "TEAM STEPS"));
    expect(await run(skills, "U_ANA", ["disable", "helpful"])).toMatch(/^Only a configured approver/);
    skills.close();
  });

  it("answers a name no skill can have plainly, before asking the store (whose keys it would break)", async () => {
    fixture = await skillsFixture();
    const store = await createStore({ url: "memory:", dataDir: fixture.dataDir });
    const skills = await fixtureSkills(fixture, { approvers: ["slack:U_BOSS"] }, store.space("skills"));
    const long = "x".repeat(201);
    expect(await run(skills, "U_ANA", ["disable", long])).toBe(
      `There is no skill named "${long}". \`skills\` lists them.`,
    );
    skills.close();
    await store.close();
  });
});
