/**
 * save_skill against a command of another session swapping things in the workspace while the
 * save runs: a folder inside the staging folder swapped for a link must not send a copied script,
 * or its executable bit, onto a file outside the workspace (the script is created executable by
 * the anchored write, so nothing opens it again by path), and a copied file swapped once opened
 * does not mix its text and executable bit with those of the file put in its place. The files are
 * written SKILL.md last, so a staging folder with a SKILL.md holds the whole skill. The save walks
 * from the workspace root once, to the skills folder: every file is written relative to the staging
 * folder it holds open.
 */
import {
  chmodSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { afterEach, expect, it, vi } from "vitest";

/** Runs once, just after a rename (or an open) of a path ending with `after.suffix`. */
const after: { call?: "rename" | "open"; suffix?: string; run?: () => void } = {};
/** Every path opened, in order. */
const opened: string[] = [];
function runAfter(call: "rename" | "open", file: unknown): void {
  if (after.call === call && after.run && after.suffix && String(file).endsWith(after.suffix)) {
    const run = after.run;
    after.run = undefined;
    run();
  }
}
vi.mock("node:fs/promises", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs/promises")>();
  const rename: typeof real.rename = async (from, to) => {
    await real.rename(from, to);
    runAfter("rename", to);
  };
  const open: typeof real.open = async (file, flags, mode) => {
    const handle = await real.open(file, flags, mode);
    opened.push(String(file));
    runAfter("open", file);
    return handle;
  };
  return { ...real, default: { ...real, rename, open }, rename, open };
});

const { createSaveSkillTool } = await import("../../src/skills/save-skill-tool.js");
const { toolWorkspace } = await import("../tools/support/tool-workspace.js");
const { skillsFixture, SKILL_CALL_CONTEXT } = await import("./support.js");

let fixture: Awaited<ReturnType<typeof skillsFixture>> | undefined;
afterEach(async () => {
  after.run = undefined;
  opened.length = 0;
  await fixture?.cleanup();
});

/** Save the skill "tooling" with a notes.txt, then the workspace's tool.sh copied in as `to`. */
function saveTooling(to: string) {
  const files = [
    { path: "notes.txt", content: "written first\n" },
    { path: to, from: "tool.sh" },
  ];
  return createSaveSkillTool(toolWorkspace({ root: fixture!.workspace })).execute(
    { name: "tooling", description: "d", instructions: "steps", files },
    SKILL_CALL_CONTEXT,
  );
}

/** The workspace's tool.sh (executable), and outside it a folder holding a plain run.sh. */
function scriptAndOutside(): string {
  const outside = path.join(fixture!.root, "outside");
  mkdirSync(outside);
  writeFileSync(path.join(outside, "run.sh"), "not the workspace's\n");
  chmodSync(path.join(outside, "run.sh"), 0o644);
  writeFileSync(path.join(fixture!.workspace, "tool.sh"), "#!/bin/sh\necho hi\n");
  chmodSync(path.join(fixture!.workspace, "tool.sh"), 0o755);
  return outside;
}

/** The staging folder's `name` made a link to `outside`. */
function swapStagingFolder(name: string, outside: string): void {
  const skills = fixture!.workspaceSkills;
  const staging = readdirSync(skills).find((entry) => entry.includes(".saving-")) ?? "";
  rmSync(path.join(skills, staging, name), { recursive: true, force: true });
  symlinkSync(outside, path.join(skills, staging, name));
}

it("a folder of the staging folder swapped for a link after a script is written: the script was in place executable, and the x bit lands on nothing outside", async () => {
  fixture = await skillsFixture();
  const outside = scriptAndOutside();
  let inPlace: number | undefined;
  after.call = "rename";
  after.suffix = "/run.sh";
  after.run = () => {
    const staging = readdirSync(fixture!.workspaceSkills).find((entry) => entry.includes(".saving-")) ?? "";
    inPlace = statSync(path.join(fixture!.workspaceSkills, staging, "scripts", "run.sh")).mode & 0o777;
    swapStagingFolder("scripts", outside);
  };
  await saveTooling("scripts/run.sh");
  expect(after.run).toBeUndefined();
  expect(inPlace).toBe(0o777 & ~process.umask());
  expect(statSync(path.join(outside, "run.sh")).mode & 0o777).toBe(0o644);
  expect(readFileSync(path.join(outside, "run.sh"), "utf8")).toBe("not the workspace's\n");
});

it("a folder of the staging folder swapped for a link before a script is written: the write refuses the link, and nothing lands outside", async () => {
  fixture = await skillsFixture();
  const outside = scriptAndOutside();
  after.call = "rename";
  after.suffix = "/notes.txt";
  after.run = () => swapStagingFolder("scripts", outside);
  const saved = await saveTooling("scripts/run.sh");
  expect(after.run).toBeUndefined();
  expect(saved.ok).toBe(false);
  expect(readdirSync(outside)).toEqual(["run.sh"]);
  expect(statSync(path.join(outside, "run.sh")).mode & 0o777).toBe(0o644);
  expect(readFileSync(path.join(outside, "run.sh"), "utf8")).toBe("not the workspace's\n");
});

it("a copied script swapped for another file once opened: the saved file is the opened one's text and x bit", async () => {
  fixture = await skillsFixture();
  const script = path.join(fixture.workspace, "tool.sh");
  writeFileSync(script, "#!/bin/sh\necho opened\n");
  chmodSync(script, 0o755);
  const other = path.join(fixture.workspace, "other.sh");
  writeFileSync(other, "echo put in its place\n");
  chmodSync(other, 0o644);
  after.call = "open";
  after.suffix = "/tool.sh";
  after.run = () => renameSync(other, script);
  const saved = await saveTooling("run.sh");
  expect(after.run).toBeUndefined();
  expect(saved.ok).toBe(true);
  const written = path.join(fixture.workspaceSkills, "tooling", "run.sh");
  expect(readFileSync(written, "utf8")).toBe("#!/bin/sh\necho opened\n");
  expect(statSync(written).mode & 0o100).toBe(0o100);
});

it("SKILL.md is written after every bundled file: a staging folder a dead process left with one holds the whole skill", async () => {
  fixture = await skillsFixture();
  scriptAndOutside();
  let staged: string[] = [];
  after.call = "rename";
  after.suffix = "/run.sh";
  after.run = () => {
    const staging = readdirSync(fixture!.workspaceSkills).find((entry) => entry.includes(".saving-")) ?? "";
    staged = readdirSync(path.join(fixture!.workspaceSkills, staging)).sort();
  };
  const saved = await saveTooling("scripts/run.sh");
  expect(after.run).toBeUndefined();
  expect(saved.ok).toBe(true);
  expect(staged).toEqual(["notes.txt", "scripts"]);
});

it("a save of many files walks from the workspace root once: each file is written relative to the staging folder held open", async () => {
  fixture = await skillsFixture();
  mkdirSync(fixture.workspaceSkills, { recursive: true });
  const files = ["a.md", "b.md", "scripts/c.sh", "scripts/d.sh"].map((file) => ({
    path: file,
    content: `${file}\n`,
  }));
  opened.length = 0;
  const saved = await createSaveSkillTool(toolWorkspace({ root: fixture.workspace })).execute(
    { name: "tooling", description: "d", instructions: "steps", files },
    SKILL_CALL_CONTEXT,
  );
  expect(saved.ok).toBe(true);
  expect(readFileSync(path.join(fixture.workspaceSkills, "tooling", "scripts", "d.sh"), "utf8")).toBe(
    "scripts/d.sh\n",
  );
  expect(opened.filter((file) => file === realpathSync(fixture!.workspace))).toHaveLength(1);
});
