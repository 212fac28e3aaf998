/**
 * save_skill against a command of another session swapping things in the workspace while the
 * save runs: a folder inside the staging folder swapped for a link must not send the executable
 * bit of a copied script onto a file outside the workspace, and a copied file swapped once opened
 * does not mix its text and executable bit with those of the file put in its place.
 */
import {
  chmodSync,
  mkdirSync,
  readdirSync,
  readFileSync,
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
  await fixture?.cleanup();
});

/** Save the skill "tooling" with the workspace's tool.sh copied in as `to`. */
function saveTooling(to: string) {
  return createSaveSkillTool(toolWorkspace({ root: fixture!.workspace })).execute(
    { name: "tooling", description: "d", instructions: "steps", files: [{ path: to, from: "tool.sh" }] },
    SKILL_CALL_CONTEXT,
  );
}

it("a folder of the staging folder swapped for a link after a script is written: the x bit lands on nothing outside", async () => {
  fixture = await skillsFixture();
  const skills = fixture.workspaceSkills;
  const outside = path.join(fixture.root, "outside");
  mkdirSync(outside);
  writeFileSync(path.join(outside, "run.sh"), "not the workspace's\n");
  chmodSync(path.join(outside, "run.sh"), 0o644);
  writeFileSync(path.join(fixture.workspace, "tool.sh"), "#!/bin/sh\necho hi\n");
  chmodSync(path.join(fixture.workspace, "tool.sh"), 0o755);
  after.call = "rename";
  after.suffix = "/run.sh";
  after.run = () => {
    const staging = readdirSync(skills).find((name) => name.includes(".saving-")) ?? "";
    const scripts = path.join(skills, staging, "scripts");
    rmSync(scripts, { recursive: true, force: true });
    symlinkSync(outside, scripts);
  };
  const saved = await saveTooling("scripts/run.sh");
  expect(after.run).toBeUndefined();
  expect(statSync(path.join(outside, "run.sh")).mode & 0o777).toBe(0o644);
  expect(saved.ok).toBe(false);
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
