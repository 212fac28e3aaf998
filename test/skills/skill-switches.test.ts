/**
 * SkillSwitches: the config's allow- and deny-lists hold for every valid skill name — also for a
 * name that is an Object.prototype property ("constructor"), which a workspace skill may take; a
 * refresh that read before this process's own switch does not undo it.
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

  it("keeps its own switch when a refresh that read before it lands after it", async () => {
    const space = memorySpace();
    const read = space.get;
    let hold: Promise<void> | undefined;
    let reached!: () => void;
    const reading = new Promise<void>((resolve) => {
      reached = resolve;
    });
    space.get = async <T>(key: string) => {
      const value = await read<T>(key);
      if (hold && key.startsWith("switch:")) {
        reached();
        await hold;
      }
      return value;
    };
    const switches = await SkillSwitches.open({ enabled: [], disabled: [] }, space);
    let release!: () => void;
    hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    const refreshing = switches.refresh(["weekly"]);
    await reading;
    hold = undefined;
    await switches.set("weekly", false);
    release();
    await refreshing;
    expect(await space.get("switch:weekly")).toBe(false);
    expect(switches.isEnabled("weekly")).toBe(false);
    // A refresh begun after the switch reads the store as usual.
    await space.set("switch:weekly", true);
    await switches.refresh(["weekly"]);
    expect(switches.isEnabled("weekly")).toBe(true);
  });
});
