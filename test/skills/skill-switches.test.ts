/**
 * SkillSwitches: the config's allow- and deny-lists hold for every valid skill name — also for a
 * name that is an Object.prototype property ("constructor"), which a workspace skill may take.
 */
import { describe, expect, it } from "vitest";
import { SkillSwitches } from "../../src/skills/skill-switches.js";
import { memorySpace } from "./support.js";

describe("SkillSwitches", () => {
  it("keeps a skill named constructor off when the config allows only other skills", async () => {
    const switches = await SkillSwitches.open({ enabled: ["check-deploy"], disabled: [] }, memorySpace());
    expect(switches.stateOf("constructor")).toEqual({ enabled: false, origin: "config" });
    expect(switches.isEnabled("check-deploy")).toBe(true);
  });

  it("keeps a skill named constructor off when the config disables it", async () => {
    const switches = await SkillSwitches.open({ enabled: [], disabled: ["constructor"] });
    expect(switches.isEnabled("constructor")).toBe(false);
  });

  it("an approver's override still wins, and persists", async () => {
    const space = memorySpace();
    const switches = await SkillSwitches.open({ enabled: ["check-deploy"], disabled: [] }, space);
    await switches.set("constructor", true);
    expect(switches.stateOf("constructor")).toEqual({ enabled: true, origin: "override" });
    const reopened = await SkillSwitches.open({ enabled: ["check-deploy"], disabled: [] }, space);
    await reopened.refresh(["constructor"]);
    expect(reopened.isEnabled("constructor")).toBe(true);
  });
});
