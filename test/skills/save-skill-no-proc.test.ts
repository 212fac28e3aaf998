/**
 * save_skill where there is no /proc/self/fd (macOS, a container without /proc: anchored-fs's
 * fallback names an open folder by the path it had): the staging folder swapped for a link to a
 * folder outside the workspace between two bundled files must not send the next file there. Each
 * file's walk starts from the staging folder held open, and its name must still lead to that
 * folder, so the swap is refused.
 */
import { mkdirSync, readdirSync, renameSync, symlinkSync } from "node:fs";
import path from "node:path";
import { afterEach, expect, it, vi } from "vitest";

vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs")>();
  const existsSync: typeof real.existsSync = (file) => file !== "/proc/self/fd" && real.existsSync(file);
  return { ...real, default: { ...real, existsSync }, existsSync };
});
/** Runs once, just after a rename to a path ending with `after.suffix`. */
const after: { suffix?: string; run?: () => void } = {};
vi.mock("node:fs/promises", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs/promises")>();
  const rename: typeof real.rename = async (from, to) => {
    await real.rename(from, to);
    if (after.run && after.suffix && String(to).endsWith(after.suffix)) {
      const run = after.run;
      after.run = undefined;
      run();
    }
  };
  return { ...real, default: { ...real, rename }, rename };
});

const { FD_DIRECTORY } = await import("../../src/tools/files/anchored-fs.js");
const { createSaveSkillTool } = await import("../../src/skills/save-skill-tool.js");
const { toolWorkspace } = await import("../tools/support/tool-workspace.js");
const { skillsFixture, SKILL_CALL_CONTEXT } = await import("./support.js");

let fixture: Awaited<ReturnType<typeof skillsFixture>> | undefined;
afterEach(async () => {
  after.run = undefined;
  await fixture?.cleanup();
});

it("without /proc, the staging folder swapped for a link after the first file: the next file is refused, nothing lands outside", async () => {
  expect(FD_DIRECTORY).toBeUndefined();
  fixture = await skillsFixture();
  const outside = path.join(fixture.root, "outside");
  mkdirSync(outside);
  mkdirSync(fixture.workspaceSkills, { recursive: true });
  after.suffix = "/a.md";
  after.run = () => {
    const skills = fixture!.workspaceSkills;
    const staging = readdirSync(skills).find((entry) => entry.includes(".saving-")) ?? "";
    renameSync(path.join(skills, staging), path.join(fixture!.workspace, "moved"));
    symlinkSync(outside, path.join(skills, staging));
  };
  const saved = await createSaveSkillTool(toolWorkspace({ root: fixture.workspace })).execute(
    {
      name: "tooling",
      description: "d",
      instructions: "steps",
      files: [
        { path: "a.md", content: "a\n" },
        { path: "authorized_keys", content: "ssh-ed25519 AAAA attacker\n" },
      ],
    },
    SKILL_CALL_CONTEXT,
  );
  expect(after.run).toBeUndefined();
  expect(saved.ok).toBe(false);
  expect(saved.output).toMatch(/changed while it was being used/);
  expect(readdirSync(outside)).toEqual([]);
});
