/**
 * Replacing a skill while another turn reads it: save_skill moves the old folder aside, then
 * renames the new one into place; a scan between the two renames (held open here by a hook after
 * the first, real rename) still finds the skill — the old one — so load_skill serves it and a
 * conversation that had loaded it is not told it was removed. A second rename that fails (injected
 * here) puts the old folder back under its name, or leaves it served beside its staging folder.
 */
import { readdirSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";

const hook: { between?: () => Promise<void>; fails?: (from: string, to: string) => boolean } = {};
vi.mock("node:fs/promises", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs/promises")>();
  const rename = async (from: string, to: string) => {
    if (hook.fails?.(String(from), String(to)))
      throw Object.assign(new Error("EIO: injected"), { code: "EIO" });
    await real.rename(from, to);
    const between = hook.between;
    if (String(to).includes(".old-") && between) {
      hook.between = undefined;
      await between();
    }
  };
  return { ...real, default: { ...real, rename }, rename };
});

const { createSaveSkillTool } = await import("../../src/skills/save-skill-tool.js");
const { createLoadSkillTool } = await import("../../src/skills/load-skill-tool.js");
const { skillsContext } = await import("../../src/skills/skill-context.js");
const { toolWorkspace } = await import("../tools/support/tool-workspace.js");
const { request } = await import("../support/engine-fixtures.js");
const { skillMd, skillsFixture, writeSkill, SKILL_CALL_CONTEXT } = await import("./support.js");

let fixture: Awaited<ReturnType<typeof skillsFixture>>;
afterEach(async () => {
  hook.fails = undefined;
  await fixture?.cleanup();
});

describe("replacing a skill while another turn reads it", () => {
  it("serves the old skill between the two renames, then the new one", async () => {
    fixture = await skillsFixture();
    writeSkill(fixture.workspaceSkills, "weekly", skillMd("weekly", "old", "OLD STEPS"));
    const loaded = [
      {
        role: "assistant",
        content: "",
        tool_calls: [
          { id: "c1", type: "function", function: { name: "load_skill", arguments: '{"name":"weekly"}' } },
        ],
      },
      { role: "tool", tool_call_id: "c1", content: "…", meta: { status: "ok" } },
    ];
    const load = createLoadSkillTool(fixture.library);
    let between: { output: string; context: string | undefined } | undefined;
    hook.between = async () => {
      between = {
        output: (await load.execute({ name: "weekly" }, SKILL_CALL_CONTEXT)).output,
        context: await skillsContext(fixture.library, request({ messages: loaded as never })),
      };
    };
    const saved = await createSaveSkillTool(toolWorkspace({ root: fixture.workspace })).execute(
      { name: "weekly", description: "new", instructions: "NEW STEPS" },
      SKILL_CALL_CONTEXT,
    );
    expect(saved.ok).toBe(true);
    expect(between?.output).toContain("OLD STEPS");
    expect(between?.context).toContain("- weekly: old");
    expect(between?.context).not.toContain("has been removed");
    fixture.library.invalidate();
    expect((await load.execute({ name: "weekly" }, SKILL_CALL_CONTEXT)).output).toContain("NEW STEPS");
  });

  it("a rename of the new folder into place that fails: the old skill is back under its name", async () => {
    fixture = await skillsFixture();
    writeSkill(fixture.workspaceSkills, "weekly", skillMd("weekly", "old", "OLD STEPS"));
    hook.fails = (from, to) => from.includes(".saving-") && to.endsWith("/weekly");
    const saved = await createSaveSkillTool(toolWorkspace({ root: fixture.workspace })).execute(
      { name: "weekly", description: "new", instructions: "NEW STEPS" },
      SKILL_CALL_CONTEXT,
    );
    expect(saved.ok).toBe(false);
    expect(readdirSync(fixture.workspaceSkills)).toEqual(["weekly"]);
    fixture.library.invalidate();
    const load = createLoadSkillTool(fixture.library);
    expect((await load.execute({ name: "weekly" }, SKILL_CALL_CONTEXT)).output).toContain("OLD STEPS");
  });

  it("putting the old folder back fails too: it stays served beside its staging folder", async () => {
    fixture = await skillsFixture();
    writeSkill(fixture.workspaceSkills, "weekly", skillMd("weekly", "old", "OLD STEPS"));
    hook.fails = (from, to) => to.endsWith("/weekly") && !from.endsWith("/weekly");
    const saved = await createSaveSkillTool(toolWorkspace({ root: fixture.workspace })).execute(
      { name: "weekly", description: "new", instructions: "NEW STEPS" },
      SKILL_CALL_CONTEXT,
    );
    expect(saved.ok).toBe(false);
    fixture.library.invalidate();
    const load = createLoadSkillTool(fixture.library);
    expect((await load.execute({ name: "weekly" }, SKILL_CALL_CONTEXT)).output).toContain("OLD STEPS");
  });
});
