/**
 * Test support for skills: a temporary workspace and data dir, writing skill folders, and a
 * library over them with switches in an in-memory space.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { SkillLibrary, skillSources } from "../../src/skills/skill-library.js";
import { SkillLoader } from "../../src/skills/skill-loader.js";
import type { SkillApprovers } from "../../src/skills/skill-authority.js";
import { SkillSavers } from "../../src/skills/skill-savers.js";
import { openSkills, type SkillsRuntime } from "../../src/skills/skills-runtime.js";
import { type SkillSwitchConfig, SkillSwitches } from "../../src/skills/skill-switches.js";
import type { KeyValueSpace } from "../../src/store/store.js";
import type { ToolContext } from "../../src/core/tool.js";
import { request, TARGET, tempDir } from "../support/engine-fixtures.js";

/** The text of a valid SKILL.md. */
export function skillMd(name: string, description: string, body = `Steps for ${name}.`): string {
  return `---\nname: ${name}\ndescription: ${description}\n---\n\n${body}\n`;
}

/** Write `<dir>/<folder>/SKILL.md` (and any files beside it); returns the folder. */
export function writeSkill(
  dir: string,
  folder: string,
  text: string,
  files: Readonly<Record<string, string>> = {},
): string {
  const skillDir = path.join(dir, folder);
  mkdirSync(skillDir, { recursive: true });
  writeFileSync(path.join(skillDir, "SKILL.md"), text);
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(skillDir, file)), { recursive: true });
    writeFileSync(path.join(skillDir, file), content);
  }
  return skillDir;
}

/** A key-value space in memory. */
export function memorySpace(): KeyValueSpace {
  const data = new Map<string, unknown>();
  const holds = (key: string, expected: unknown) =>
    data.has(key) && JSON.stringify(data.get(key)) === JSON.stringify(expected);
  return {
    get: async <T>(key: string) => data.get(key) as T | undefined,
    set: async (key, value) => {
      data.set(key, structuredClone(value));
    },
    delete: async (key) => data.delete(key),
    setIfAbsent: async (key, value) => {
      if (data.has(key)) return false;
      data.set(key, value);
      return true;
    },
    replaceIf: async (key, expected, value) => {
      if (!holds(key, expected)) return false;
      data.set(key, structuredClone(value));
      return true;
    },
    deleteIf: async (key, expected) => holds(key, expected) && data.delete(key),
  };
}

/** A workspace, data dir and one configured dir, with a library over them. */
export async function skillsFixture(config: SkillSwitchConfig = { enabled: [], disabled: [] }) {
  const { dir, cleanup } = await tempDir("coworker-skills-");
  const workspace = path.join(dir, "ws");
  const dataDir = path.join(dir, "data");
  const extra = path.join(dir, "extra");
  mkdirSync(workspace, { recursive: true });
  const sources = skillSources(workspace, dataDir, [extra]);
  const space = memorySpace();
  const switches = await SkillSwitches.open(config, space);
  const library = new SkillLibrary({
    loader: new SkillLoader(sources),
    switches,
    workspaceRoot: workspace,
    scanIntervalMs: 0,
  });
  return {
    sources,
    switches,
    root: dir,
    workspace,
    dataDir,
    extra,
    space,
    savers: new SkillSavers(space),
    library,
    workspaceSkills: sources[0]!.dir,
    dataSkills: sources[1]!.dir,
    cleanup,
  };
}

/** The app's wiring of skills (tools, commands, context) over a fixture's folders and `space` (the fixture's by default). */
export function fixtureSkills(
  fixture: Awaited<ReturnType<typeof skillsFixture>>,
  approvers: SkillApprovers,
  space: KeyValueSpace = fixture.space,
) {
  return openSkills({
    serviceFiles: [],
    workspaceRoot: fixture.workspace,
    dataDir: fixture.dataDir,
    settings: { dirs: [fixture.extra], enabled: [], disabled: [], catalogBudgetTokens: 2_000 },
    space,
    approvers,
    scanIntervalMs: 0,
    watch: false,
  });
}

/** Run `skills <args>` as `userId` in engine-fixtures' TARGET thread; the reply's text. */
export async function runSkillsCommand(
  skills: SkillsRuntime,
  userId: string,
  args: string[],
): Promise<string> {
  const reply = await skills.commands
    .find((command) => command.name === "skills")!
    .run({
      sessionId: "s1",
      target: TARGET,
      user: { id: userId, name: userId },
      args,
      startTurn: async () => "started" as const,
    });
  return typeof reply === "string" ? reply : reply.text;
}

/** The context of a skill tool's call in a turn of Ana's in engine-fixtures' TARGET thread. */
export const SKILL_CALL_CONTEXT = {
  request: request(),
  facts: { downloadedFiles: new Set<string>() },
} as unknown as ToolContext;
