/**
 * Parsing and loading SKILL.md folders: a valid skill with every front-matter field, malformed
 * ones reported with file and reason (no front matter, bad YAML, missing description, name not
 * matching the folder, bad name), shadowing across sources, edits seen by the next scan, a
 * scan begun before an invalidation not kept by the library, and a library's callers sharing the
 * scan being made.
 */
import { mkdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { parseSkillFile, renderSkillFile } from "../../src/skills/skill-file.js";
import { SkillLibrary } from "../../src/skills/skill-library.js";
import { SkillLoader, type SkillScan } from "../../src/skills/skill-loader.js";
import { SKILL_FILE } from "../../src/core/workspace-layout.js";
import { skillMd, skillsFixture, writeSkill } from "./support.js";

let fixture: Awaited<ReturnType<typeof skillsFixture>>;
afterEach(async () => fixture?.cleanup());

describe("SKILL.md parsing", () => {
  it("refuses front matter too deep or too large before parsing it", () => {
    const deep = `---\nname: x\ndescription: d\nmetadata:\n  k: ${"[".repeat(100_000)}${"]".repeat(100_000)}\n---\nbody`;
    expect(parseSkillFile(deep, "x")).toEqual({
      ok: false,
      reason: "the front matter is over 16 KB (keep long text in the body)",
    });
    const nested = `---\nname: x\ndescription: d\nmetadata:\n  k: ${"[".repeat(65)}${"]".repeat(65)}\n---\nbody`;
    expect(parseSkillFile(nested, "x")).toEqual({
      ok: false,
      reason: "the front matter has more than 64 flow brackets ([ or {)",
    });
    // A quoted `]` closes nothing: it must not hide the nesting from the count.
    const quoted = `---\nname: x\ndescription: d\nx: ${'["]",'.repeat(2500)}1${"]".repeat(2500)}\n---\nbody`;
    expect(parseSkillFile(quoted, "x")).toEqual({
      ok: false,
      reason: "the front matter has more than 64 flow brackets ([ or {)",
    });
    const indented = ["---", "name: x", "description: d", "metadata:"];
    for (let level = 1; level <= 40; level++) indented.push(`${"  ".repeat(level)}k${level}:`);
    expect(parseSkillFile([...indented, "---", "body"].join("\n"), "x")).toEqual({
      ok: false,
      reason: "the front matter is indented deeper than 32 levels",
    });
    const fine = `---\nname: x\ndescription: d\nmetadata:\n  k: ${"[".repeat(8)}${"]".repeat(8)}\n---\n${"{[".repeat(500)}`;
    expect(parseSkillFile(fine, "x").ok).toBe(true);
  });

  it("reads name, description, license, allowed-tools, metadata and the body", () => {
    const text = [
      "---",
      "name: check-deploy",
      "description: Check that a deploy went out.",
      "license: MIT",
      "allowed-tools: run_command read_file",
      "metadata:",
      "  owner: ops",
      "---",
      "",
      "# Check a deploy",
      "1. Look at the logs.",
    ].join("\n");
    const parsed = parseSkillFile(text, "check-deploy");
    expect(parsed).toEqual({
      ok: true,
      document: {
        name: "check-deploy",
        description: "Check that a deploy went out.",
        license: "MIT",
        allowedTools: ["run_command", "read_file"],
        metadata: { owner: "ops" },
        body: "# Check a deploy\n1. Look at the logs.",
      },
    });
  });

  it.each([
    ["no front matter", "# just markdown", /no YAML front matter/],
    ["bad YAML", "---\nname: [unclosed\n---\nbody", /bad front matter/],
    ["a missing description", "---\nname: x-skill\n---\nbody", /needs a `description`/],
    ["an empty description", "---\nname: x-skill\ndescription: '  '\n---\nbody", /non-empty `description`/],
    ["a name not matching the folder", skillMd("other", "d"), /does not match its folder "x-skill"/],
    ["a bad name", "---\nname: X_Skill\ndescription: d\n---\n", /lower-case letters/],
    ["a list as front matter", "---\n- a\n- b\n---\n", /mapping|name/],
  ])("refuses %s with the reason", (_label, text, reason) => {
    const parsed = parseSkillFile(text, "x-skill");
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.reason).toMatch(reason);
  });

  it("renders a SKILL.md that parses back to the same skill", () => {
    const text = renderSkillFile({
      name: "weekly-report",
      description: "Write: the report #1",
      body: "Do it.",
    });
    expect(parseSkillFile(text, "weekly-report")).toMatchObject({
      ok: true,
      document: { name: "weekly-report", description: "Write: the report #1", body: "Do it." },
    });
  });
});

describe("SkillLoader", () => {
  it("loads valid skills and reports malformed ones with file and reason", async () => {
    fixture = await skillsFixture();
    writeSkill(fixture.workspaceSkills, "check-deploy", skillMd("check-deploy", "Check a deploy"));
    writeSkill(fixture.workspaceSkills, "broken", "---\nname: broken\n---\nno description");
    writeSkill(fixture.dataSkills, "misnamed", skillMd("something-else", "d"));
    const scan = await fixture.library.scan();
    expect([...scan.skills.keys()]).toEqual(["check-deploy"]);
    expect(scan.problems.map((p) => [path.relative(fixture.root, p.file), p.source.kind])).toEqual([
      ["ws/.coworker/skills/broken/SKILL.md", "workspace"],
      ["data/skills/misnamed/SKILL.md", "data"],
    ]);
    expect(scan.problems[0]!.reason).toMatch(/description/);
    expect(scan.problems[1]!.reason).toMatch(/does not match its folder/);
  });

  it("reads no workspace SKILL.md that is a link out of the workspace; links inside it work", async () => {
    fixture = await skillsFixture();
    const hostFile = path.join(fixture.root, "host", "notes", "SKILL.md");
    mkdirSync(path.dirname(hostFile), { recursive: true });
    writeFileSync(hostFile, skillMd("notes", "a host file the agent linked to"));
    mkdirSync(path.join(fixture.workspaceSkills, "notes"), { recursive: true });
    symlinkSync(hostFile, path.join(fixture.workspaceSkills, "notes", SKILL_FILE));
    const shared = path.join(fixture.workspace, "shared-skills", "triage");
    writeSkill(path.dirname(shared), "triage", skillMd("triage", "kept elsewhere in the workspace"));
    symlinkSync(shared, path.join(fixture.workspaceSkills, "triage"));
    const scan = await fixture.library.scan();
    expect([...scan.skills.keys()]).toEqual(["triage"]);
    expect(scan.problems).toEqual([
      expect.objectContaining({
        reason: expect.stringMatching(
          /^not read: path "\.coworker\/skills\/notes\/SKILL\.md" resolves to .*host\/notes\/SKILL\.md, which is outside the workspace/,
        ),
      }),
    ]);
    // A configured folder is the operator's: its links are followed as before.
    writeSkill(fixture.extra, "linked", "");
    rmSync(path.join(fixture.extra, "linked", SKILL_FILE));
    symlinkSync(hostFile, path.join(fixture.extra, "linked", SKILL_FILE));
    expect((await fixture.library.scan()).problems.map((problem) => problem.reason)).toContainEqual(
      expect.stringMatching(/does not match its folder/),
    );
  });

  it("a later source shadows an earlier one; a broken later one does not", async () => {
    fixture = await skillsFixture();
    writeSkill(fixture.workspaceSkills, "triage", skillMd("triage", "from the workspace"));
    writeSkill(fixture.dataSkills, "triage", skillMd("triage", "from the data dir"));
    writeSkill(fixture.extra, "triage", skillMd("triage", "from skills.dirs"));
    writeSkill(fixture.workspaceSkills, "report", skillMd("report", "from the workspace"));
    writeSkill(fixture.extra, "report", "---\nname: report\n---\n");
    const scan = await fixture.library.scan();
    expect(scan.skills.get("triage")?.description).toBe("from skills.dirs");
    expect(scan.skills.get("triage")?.source.kind).toBe("configured");
    expect(scan.shadowed.map((s) => path.relative(fixture.root, s.hidden))).toEqual([
      "ws/.coworker/skills/triage",
      "data/skills/triage",
    ]);
    expect(scan.skills.get("report")?.description).toBe("from the workspace");
    expect(scan.problems).toHaveLength(1);
  });

  it("serves a skill moved aside by save_skill only in the workspace and while that save's staging folder is there", async () => {
    fixture = await skillsFixture();
    const skills = fixture.workspaceSkills;
    writeSkill(skills, ".mid.old-0000000a", skillMd("mid", "being replaced"));
    writeSkill(skills, ".mid.saving-0000000a", skillMd("mid", "the new one"));
    writeSkill(skills, ".crashed.old-0000000b", skillMd("crashed", "its staging folder gone"));
    writeSkill(skills, ".other.old-0000000c", skillMd("other", "another save's staging"));
    writeSkill(skills, ".other.saving-0000000d", skillMd("other", "new"));
    writeSkill(fixture.dataSkills, ".ops.old-0000000e", skillMd("ops", "in the data dir"));
    writeSkill(fixture.dataSkills, ".ops.saving-0000000e", skillMd("ops", "new"));
    const scan = await fixture.library.scan();
    expect(scan.skills.get("mid")?.description).toBe("being replaced");
    expect([...scan.skills.keys()]).toEqual(["mid"]);
    expect(scan.problems).toEqual([]);
  });

  it("sees a changed, added and removed skill on the next scan", async () => {
    fixture = await skillsFixture();
    const dir = writeSkill(fixture.workspaceSkills, "notes", skillMd("notes", "first"));
    expect((await fixture.library.scan()).skills.get("notes")?.description).toBe("first");
    writeFileSync(path.join(dir, "SKILL.md"), skillMd("notes", "second, longer"));
    utimesSync(path.join(dir, "SKILL.md"), new Date(), new Date(Date.now() + 5_000));
    writeSkill(fixture.dataSkills, "added", skillMd("added", "new"));
    let scan = await fixture.library.scan();
    expect(scan.skills.get("notes")?.description).toBe("second, longer");
    expect(scan.skills.has("added")).toBe(true);
    writeFileSync(path.join(dir, "SKILL.md"), "garbage");
    utimesSync(path.join(dir, "SKILL.md"), new Date(), new Date(Date.now() + 10_000));
    scan = await fixture.library.scan();
    expect(scan.skills.has("notes")).toBe(false);
    expect(scan.problems.map((p) => p.reason)).toEqual([expect.stringMatching(/front matter/)]);
  });

  it("returns the same scan while nothing changed; a library reuses it for its interval", async () => {
    fixture = await skillsFixture();
    writeSkill(fixture.workspaceSkills, "notes", skillMd("notes", "first"));
    const loader = new SkillLoader(fixture.sources);
    const first = await loader.scan();
    expect(await loader.scan()).toBe(first);
    let now = 0;
    const library = new SkillLibrary({
      loader,
      switches: fixture.switches,
      workspaceRoot: fixture.workspace,
      scanIntervalMs: 1_000,
      now: () => now,
    });
    await library.scan();
    writeSkill(fixture.dataSkills, "added", skillMd("added", "new"));
    now = 999;
    expect((await library.scan()).skills.has("added")).toBe(false);
    library.invalidate();
    expect((await library.scan()).skills.has("added")).toBe(true);
    writeSkill(fixture.dataSkills, "later", skillMd("later", "newer"));
    now = 2_500;
    expect((await library.scan()).skills.has("later")).toBe(true);
  });

  it("a library keeps no scan begun before an invalidation (a skill saved meanwhile)", async () => {
    fixture = await skillsFixture();
    const loader = new SkillLoader(fixture.sources);
    const before = await loader.scan();
    let finish: (scan: SkillScan) => void = () => {};
    const scans = vi.spyOn(loader, "scan").mockImplementationOnce(
      () =>
        new Promise((resolve) => {
          finish = resolve;
        }),
    );
    const library = new SkillLibrary({
      loader,
      switches: fixture.switches,
      workspaceRoot: fixture.workspace,
      scanIntervalMs: 60_000,
      now: () => 0,
    });
    const inFlight = library.scan();
    writeSkill(fixture.workspaceSkills, "saved", skillMd("saved", "written meanwhile"));
    library.invalidate();
    const asked = library.scan();
    finish(before);
    expect(await inFlight).toBe(before);
    expect((await asked).skills.has("saved")).toBe(true);
    expect((await library.scan()).skills.has("saved")).toBe(true);
    expect(scans).toHaveBeenCalledTimes(2);
  });

  it("a library's callers share the scan being made; the next call makes a new one", async () => {
    fixture = await skillsFixture();
    writeSkill(fixture.workspaceSkills, "notes", skillMd("notes", "first"));
    const loader = new SkillLoader(fixture.sources);
    const scans = vi.spyOn(loader, "scan");
    const library = new SkillLibrary({
      loader,
      switches: fixture.switches,
      workspaceRoot: fixture.workspace,
      scanIntervalMs: 0,
    });
    const [first, ...others] = await Promise.all([library.scan(), library.scan(), library.scan()]);
    expect(scans).toHaveBeenCalledTimes(1);
    for (const scan of others) expect(scan).toBe(first);
    writeSkill(fixture.dataSkills, "added", skillMd("added", "after the shared scan"));
    expect((await library.scan()).skills.has("added")).toBe(true);
    expect(scans).toHaveBeenCalledTimes(2);
  });

  it("watching: a change is picked up after its event, a created source folder on the next scan", async () => {
    fixture = await skillsFixture();
    writeSkill(fixture.workspaceSkills, "notes", skillMd("notes", "first"));
    let now = 0;
    const loader = new SkillLoader(fixture.sources, { watch: true, fullScanEveryMs: 60_000, now: () => now });
    try {
      const first = await loader.scan();
      expect(await loader.scan()).toBe(first);
      writeSkill(fixture.workspaceSkills, "watched", skillMd("watched", "seen by the watcher"));
      await vi.waitFor(async () => expect((await loader.scan()).skills.has("watched")).toBe(true));
      writeSkill(fixture.dataSkills, "fresh", skillMd("fresh", "in a new source folder"));
      expect((await loader.scan()).skills.has("fresh")).toBe(true);
      now = 60_000;
      expect((await loader.scan()).skills.size).toBe(3);
    } finally {
      loader.close();
    }
  });

  it("lists the files beside a skill, not SKILL.md or dot-files", async () => {
    fixture = await skillsFixture();
    const dir = writeSkill(fixture.workspaceSkills, "kit", skillMd("kit", "d"), {
      "scripts/check.sh": "echo ok",
      "reference.md": "ref",
      ".hidden": "x",
    });
    const kit = (await fixture.library.scan()).skills.get("kit")!;
    expect(kit.dir).toBe(dir);
    expect(await fixture.library.filesBeside(kit)).toEqual(["reference.md", "scripts/check.sh"]);
  });
});
