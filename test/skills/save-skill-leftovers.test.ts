/**
 * What a save_skill whose process died left in the workspace's skills folder, made on disk as the
 * crash would have left it, cleaned up when the skills are loaded (the library's first scan): the
 * aside folder the loader serves (beside its staging folder) is put back and that staging folder
 * removed; every other staging or aside folder is removed — a staging folder is never completed
 * into place, nor an aside folder the loader does not serve put back, so a skill deleted since never
 * comes back; a folder younger than the grace period (a save under way in another process) is left
 * alone, and neither a leftover that is a link nor a link inside one is followed; an aside folder
 * that cannot be put back stays with its staging folder, and a leftover that cannot be removed is
 * logged and left, the others cleared all the same. And a save whose new skill is in place is done
 * though it cannot remove the old folder; a failed save that cannot remove its staging folder
 * reports its own error and logs the folder it left.
 */
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { afterEach, expect, it, vi } from "vitest";
import { createSaveSkillTool } from "../../src/skills/save-skill-tool.js";
import { clearSaveLeftovers, LEFTOVER_GRACE_MS } from "../../src/skills/skill-save-leftovers.js";
import { asideSkillFolder, stagingSkillFolder } from "../../src/skills/skill-save-folders.js";
import { openSkills } from "../../src/skills/skills-runtime.js";
import { toolWorkspace } from "../tools/support/tool-workspace.js";
import { SKILL_CALL_CONTEXT, skillMd, skillsFixture, writeSkill } from "./support.js";

let fixture: Awaited<ReturnType<typeof skillsFixture>> | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await fixture?.cleanup();
  fixture = undefined;
});

/** The skills of the fixture's workspace as the app opens them, logging to `warn`. */
function loadSkills(warn: (...args: unknown[]) => void = () => {}) {
  return openSkills({
    serviceFiles: [],
    workspaceRoot: fixture!.workspace,
    dataDir: fixture!.dataDir,
    settings: { dirs: [], enabled: [], disabled: [], catalogBudgetTokens: 2_000 },
    approvers: { approvers: [] },
    scanIntervalMs: 0,
    watch: false,
    logger: { warn } as never,
  });
}

/** Load the skills that late: every folder made so far is older than the grace period. */
function afterTheGrace(): void {
  vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + LEFTOVER_GRACE_MS + 60_000 });
}

/** The names in the workspace's skills folder, sorted. */
function folders(): string[] {
  return readdirSync(fixture!.workspaceSkills).sort();
}

/** The skill `name` ("tooling" unless told) in place, in its first version. */
function toolingInPlace(name = "tooling"): string {
  return writeSkill(fixture!.workspaceSkills, name, skillMd(name, "old version"), {
    "old.txt": "old\n",
  });
}

/**
 * A replace of `name` ("tooling" unless told) that died between its renames: new one staged, old
 * one (last written an hour before) moved aside.
 */
function replaceDiedBetweenRenames(tag: string, name = "tooling"): void {
  const hourAgo = new Date(Date.now() - 60 * 60_000);
  utimesSync(toolingInPlace(name), hourAgo, hourAgo);
  writeSkill(fixture!.workspaceSkills, stagingSkillFolder(name, tag), skillMd(name, "new version"), {
    "scripts/run.sh": "echo new\n",
  });
  renameSync(
    path.join(fixture!.workspaceSkills, name),
    path.join(fixture!.workspaceSkills, asideSkillFolder(name, tag)),
  );
}

/** Clear the fixture's leftovers as the first scan would, once every folder made is past the grace period. */
function clearLate(warn: (fields: { skill?: string }, message: string) => void): Promise<void> {
  const late = Date.now() + LEFTOVER_GRACE_MS + 60_000;
  return clearSaveLeftovers(fixture!.sources, { offLimits: [], logger: { warn } as never, now: () => late });
}

/** A folder `nested` folders deep below `dir`: AnchoredDir.removeDir refuses one over 100 deep. */
function nestDeep(dir: string, nested = 102): void {
  mkdirSync(path.join(dir, ...Array.from({ length: nested }, () => "d")), { recursive: true });
}

/** What `warn` was told of leftovers: one message per folder. */
function cleaned(warn: ReturnType<typeof vi.fn>): string[] {
  return warn.mock.calls.map((call) => String(call[1])).filter((message) => message.includes("interrupted"));
}

it("a replace that died between its renames puts back the old skill the loader served and removes the staging folder", async () => {
  fixture = await skillsFixture();
  replaceDiedBetweenRenames("0000000a");
  afterTheGrace();
  const warn = vi.fn();
  const skills = await loadSkills(warn);
  const scan = await skills.library.scan();
  expect(scan.skills.get("tooling")?.description).toBe("old version");
  expect(scan.skills.get("tooling")?.dir).toBe(path.join(fixture.workspaceSkills, "tooling"));
  expect(folders()).toEqual(["tooling"]);
  expect(readdirSync(path.join(fixture.workspaceSkills, "tooling")).sort()).toEqual(["SKILL.md", "old.txt"]);
  expect(cleaned(warn)).toEqual([
    "skills: put back the skill an interrupted save_skill had moved aside",
    "skills: removed a folder left by an interrupted save_skill",
  ]);
  skills.close();
});

it("a staging folder whose skill is not in place is removed, never installed: whole, or left by a version that wrote SKILL.md first", async () => {
  fixture = await skillsFixture();
  const skillsDir = fixture.workspaceSkills;
  writeSkill(skillsDir, stagingSkillFolder("notes", "0000000b"), skillMd("notes", "approved notes"), {
    "scripts/run.sh": "echo\n",
  });
  // SKILL.md first, the process died before its bundled scripts/run.sh (before 697538a).
  writeSkill(skillsDir, stagingSkillFolder("deploy", "00000018"), skillMd("deploy", "Run scripts/run.sh."));
  mkdirSync(path.join(skillsDir, stagingSkillFolder("draft", "0000000c"), "scripts"), { recursive: true });
  writeFileSync(path.join(skillsDir, stagingSkillFolder("draft", "0000000c"), "scripts", "a.sh"), "echo\n");
  afterTheGrace();
  const warn = vi.fn();
  const skills = await loadSkills(warn);
  const scan = await skills.library.scan();
  expect([...scan.skills.keys()]).toEqual([]);
  expect(folders()).toEqual([]);
  expect(cleaned(warn)).toEqual(Array(3).fill("skills: removed a folder left by an interrupted save_skill"));
  skills.close();
});

it("an aside folder the loader does not serve (no staging folder of its save) is removed, never put back", async () => {
  fixture = await skillsFixture();
  const skillsDir = fixture.workspaceSkills;
  // A replace that died after its second rename; the new skill in place was deleted since.
  writeSkill(skillsDir, asideSkillFolder("tooling", "0000000e"), skillMd("tooling", "old, unwanted version"));
  // Another's staging folder is there, of a later save's tag: the aside folder is still not served.
  writeSkill(skillsDir, stagingSkillFolder("tooling", "00000019"), skillMd("tooling", "a later save"));
  afterTheGrace();
  const warn = vi.fn();
  const skills = await loadSkills(warn);
  const scan = await skills.library.scan();
  expect(scan.skills.has("tooling")).toBe(false);
  expect(folders()).toEqual([]);
  expect(cleaned(warn)).toEqual(Array(2).fill("skills: removed a folder left by an interrupted save_skill"));
  skills.close();
});

it("staging and aside folders whose skill is in place are removed; the skill in place stays as it is", async () => {
  fixture = await skillsFixture();
  toolingInPlace();
  const skillsDir = fixture.workspaceSkills;
  writeSkill(skillsDir, stagingSkillFolder("tooling", "0000000d"), skillMd("tooling", "a later save"));
  writeSkill(skillsDir, asideSkillFolder("tooling", "0000000e"), skillMd("tooling", "older still"));
  afterTheGrace();
  const warn = vi.fn();
  const skills = await loadSkills(warn);
  expect((await skills.library.scan()).skills.get("tooling")?.description).toBe("old version");
  expect(folders()).toEqual(["tooling"]);
  expect(readFileSync(path.join(skillsDir, "tooling", "old.txt"), "utf8")).toBe("old\n");
  expect(cleaned(warn)).toEqual([
    "skills: removed a folder left by an interrupted save_skill",
    "skills: removed a folder left by an interrupted save_skill",
  ]);
  skills.close();
});

it("folders younger than the grace period are left alone: a save of another process may be under way", async () => {
  fixture = await skillsFixture();
  replaceDiedBetweenRenames("00000010");
  writeSkill(
    fixture.workspaceSkills,
    stagingSkillFolder("notes", "00000011"),
    skillMd("notes", "being saved"),
  );
  const before = folders();
  const warn = vi.fn();
  const skills = await loadSkills(warn);
  const scan = await skills.library.scan();
  // The old skill is still served from its aside folder, as while the save is under way: that
  // folder was written an hour ago, but moved aside just now.
  expect(scan.skills.get("tooling")?.description).toBe("old version");
  expect(scan.skills.has("notes")).toBe(false);
  expect(folders()).toEqual(before);
  expect(cleaned(warn)).toEqual([]);
  skills.close();
});

it("a skill with a save folder younger than the grace period keeps its older leftovers too: its save may be under way", async () => {
  fixture = await skillsFixture();
  const skillsDir = fixture.workspaceSkills;
  const older = writeSkill(
    skillsDir,
    stagingSkillFolder("notes", "00000015"),
    skillMd("notes", "older save"),
  );
  writeSkill(skillsDir, stagingSkillFolder("other", "00000017"), skillMd("other", "long dead"));
  const olderAt = Math.max(
    lstatSync(older).ctimeMs,
    lstatSync(path.join(skillsDir, stagingSkillFolder("other", "00000017"))).ctimeMs,
  );
  // The file system's clock moves on (no sleep: a file is touched until its change time has), then a save begins.
  const probe = path.join(fixture.root, "probe");
  writeFileSync(probe, "");
  while (lstatSync(probe).ctimeMs <= olderAt + 1) writeFileSync(probe, "");
  const younger = writeSkill(
    skillsDir,
    stagingSkillFolder("notes", "00000016"),
    skillMd("notes", "newer save"),
  );
  const now = Math.max(lstatSync(younger).ctimeMs, lstatSync(younger).mtimeMs) + LEFTOVER_GRACE_MS - 1;
  expect(now - olderAt).toBeGreaterThanOrEqual(LEFTOVER_GRACE_MS);
  await clearSaveLeftovers(fixture.sources, { offLimits: [], now: () => now });
  expect(folders()).toContain(stagingSkillFolder("notes", "00000015"));
  expect(folders()).toContain(stagingSkillFolder("notes", "00000016"));
  expect(folders()).not.toContain("notes");
  expect(folders()).not.toContain(stagingSkillFolder("other", "00000017"));
  expect(folders()).not.toContain("other");
});

it("only the save's own folder names are touched", async () => {
  fixture = await skillsFixture();
  toolingInPlace();
  const others = [".tooling.saving-xyz", ".tooling.old-0000001z", ".git", ".tooling.saving-00000012.bak"];
  for (const name of others) writeSkill(fixture.workspaceSkills, name, skillMd("tooling", "not a save's"));
  afterTheGrace();
  const skills = await loadSkills();
  await skills.library.scan();
  expect(folders()).toEqual([...others, "tooling"].sort());
  skills.close();
});

it("a leftover that is a link is not followed, and a link inside a leftover is removed as a link", async () => {
  fixture = await skillsFixture();
  toolingInPlace();
  const outside = path.join(fixture.root, "outside");
  writeSkill(outside, "kept", skillMd("tooling", "outside the workspace"), { "secret.txt": "keep me\n" });
  const skillsDir = fixture.workspaceSkills;
  const linked = stagingSkillFolder("tooling", "00000013");
  symlinkSync(path.join(outside, "kept"), path.join(skillsDir, linked));
  const aside = asideSkillFolder("tooling", "00000014");
  mkdirSync(path.join(skillsDir, aside));
  symlinkSync(path.join(outside, "kept"), path.join(skillsDir, aside, "scripts"));
  afterTheGrace();
  const skills = await loadSkills();
  await skills.library.scan();
  expect(folders()).toEqual([linked, "tooling"].sort());
  expect(lstatSync(path.join(skillsDir, linked)).isSymbolicLink()).toBe(true);
  expect(readdirSync(path.join(outside, "kept")).sort()).toEqual(["SKILL.md", "secret.txt"]);
  expect(readFileSync(path.join(outside, "kept", "secret.txt"), "utf8")).toBe("keep me\n");
  expect(existsSync(path.join(skillsDir, aside))).toBe(false);
  skills.close();
});

it("a replace whose old folder cannot be removed once the new skill is in place is reported saved, the failure logged", async () => {
  fixture = await skillsFixture();
  const skillsDir = fixture.workspaceSkills;
  const old = writeSkill(skillsDir, "tooling", skillMd("tooling", "old version"));
  nestDeep(old);
  const warn = vi.fn();
  const onSaved = vi.fn();
  const result = await createSaveSkillTool(toolWorkspace({ root: fixture.workspace }), {
    onSaved,
    logger: { warn } as never,
  }).execute({ name: "tooling", description: "new version", instructions: "steps" }, SKILL_CALL_CONTEXT);
  expect(result).toMatchObject({ ok: true, output: expect.stringMatching(/^Replaced the skill "tooling"/) });
  expect(onSaved).toHaveBeenCalledOnce();
  expect(readFileSync(path.join(skillsDir, "tooling", "SKILL.md"), "utf8")).toMatch(/new version/);
  expect(folders().filter((name) => name.startsWith(".tooling.old-"))).toHaveLength(1);
  expect(folders().some((name) => name.startsWith(".tooling.saving-"))).toBe(false);
  expect(warn).toHaveBeenCalledWith(
    expect.objectContaining({ skill: "tooling" }),
    "skills: save_skill could not remove its folder; the cleanup at the next start will",
  );
});

it("a served aside folder that cannot be put back stays, and so does its staging folder; the others are still cleared", async () => {
  fixture = await skillsFixture();
  const skillsDir = fixture.workspaceSkills;
  replaceDiedBetweenRenames("0000001a", "alpha");
  replaceDiedBetweenRenames("0000001b", "beta");
  // Once the first is put back (whichever is first), a file takes the other's name: renaming its
  // aside folder there fails (ENOTDIR), as when anything holds the name.
  let blocked = "";
  const warn = vi.fn((fields: { skill?: string }, message: string) => {
    if (blocked !== "" || !message.startsWith("skills: put back")) return;
    blocked = fields.skill === "alpha" ? "beta" : "alpha";
    writeFileSync(path.join(skillsDir, blocked), "in the way\n");
  });
  await clearLate(warn);
  const restored = blocked === "alpha" ? "beta" : "alpha";
  const tag = blocked === "alpha" ? "0000001a" : "0000001b";
  expect(folders()).toEqual(
    [blocked, restored, asideSkillFolder(blocked, tag), stagingSkillFolder(blocked, tag)].sort(),
  );
  expect(readFileSync(path.join(skillsDir, restored, "SKILL.md"), "utf8")).toMatch(/old version/);
  expect(readFileSync(path.join(skillsDir, asideSkillFolder(blocked, tag), "SKILL.md"), "utf8")).toMatch(
    /old version/,
  );
  expect(warn.mock.calls.map((call) => [call[0].skill, call[1]])).toEqual([
    [restored, "skills: put back the skill an interrupted save_skill had moved aside"],
    [blocked, "skills: could not put back the skill an interrupted save_skill had moved aside"],
    [restored, "skills: removed a folder left by an interrupted save_skill"],
  ]);
  expect(warn.mock.calls[1]![0]).toMatchObject({ err: expect.objectContaining({ code: "ENOTDIR" }) });
});

it("a leftover that cannot be removed is logged and left; the others are still removed", async () => {
  fixture = await skillsFixture();
  const skillsDir = fixture.workspaceSkills;
  const deep = writeSkill(skillsDir, stagingSkillFolder("notes", "0000001c"), skillMd("notes", "deep"));
  nestDeep(deep);
  writeSkill(skillsDir, stagingSkillFolder("draft", "0000001d"), skillMd("draft", "dead"));
  const warn = vi.fn();
  await clearLate(warn);
  expect(folders()).toEqual([stagingSkillFolder("notes", "0000001c")]);
  expect(warn.mock.calls.map((call) => [call[0].skill, call[1]]).sort()).toEqual([
    ["draft", "skills: removed a folder left by an interrupted save_skill"],
    ["notes", "skills: could not remove a folder left by an interrupted save_skill"],
  ]);
});

it("a save that fails and cannot remove its staging folder reports its own error; the folder is logged and left", async () => {
  fixture = await skillsFixture();
  const warn = vi.fn();
  const onSaved = vi.fn();
  const files = [
    // A staging folder nested over 100 deep is one AnchoredDir.removeDir refuses to remove.
    { path: `${Array.from({ length: 102 }, () => "d").join("/")}/deep.txt`, content: "deep\n" },
    // A path the schema refuses (execute is called here without it), the write refuses too: the save fails here.
    { path: "notes/../more.txt", content: "more\n" },
  ];
  const result = await createSaveSkillTool(toolWorkspace({ root: fixture.workspace }), {
    onSaved,
    logger: { warn } as never,
  }).execute({ name: "tooling", description: "d", instructions: "steps", files }, SKILL_CALL_CONTEXT);
  expect(result).toMatchObject({
    ok: false,
    output: expect.stringMatching(/^The skill was not saved: .*not a plain path below its folder/),
  });
  expect(onSaved).not.toHaveBeenCalled();
  expect(folders()).toHaveLength(1);
  expect(folders()[0]).toMatch(/^\.tooling\.saving-[0-9a-f]{8}$/);
  expect(warn).toHaveBeenCalledExactlyOnceWith(
    expect.objectContaining({ skill: "tooling", folder: `.coworker/skills/${folders()[0]}` }),
    "skills: save_skill could not remove its folder; the cleanup at the next start will",
  );
});
