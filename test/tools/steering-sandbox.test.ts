/**
 * The steering files — `.coworker/` (the team's skills) and AGENTS.md — change only with a
 * person's approval, so run_command's bubblewrap sandbox shows them read-only: a command can read
 * them but neither change nor create one, through a link neither, and whatever the sandbox has to
 * put on the host for that (an empty `.coworker`, a placeholder AGENTS.md while commands run) does
 * not outlive its purpose. A link on the way to one cannot be replaced either: the folder holding
 * it (the workspace root, for a linked `.coworker` or AGENTS.md) is read-only but for its files and
 * folders. The rest of the workspace stays writable. Unsandboxed, none of it holds.
 */
import { existsSync } from "node:fs";
import { lstat, mkdir, readdir, readFile, readlink, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { shellSandboxCheck } from "../../src/cli/doctor-shell-check.js";
import { configSchema } from "../../src/config/schema.js";
import { uploadFolderOf } from "../../src/core/upload-folders.js";
import { skillSources } from "../../src/skills/skill-library.js";
import { SkillLoader } from "../../src/skills/skill-loader.js";
import { bubblewrapBackend } from "../../src/tools/shell/bubblewrap-backend.js";
import { unsandboxedBackend } from "../../src/tools/shell/sandbox-backend.js";
import { MAX_LOCKED_ENTRIES } from "../../src/tools/shell/steering-link-locks.js";
import { spawnPlanSync } from "./support/spawn-plan.js";
import { call, makeContext, TEST_TARGET, tempDir } from "./support/tool-context.js";
import { quickRunCommand } from "./support/quick-run-command.js";

let base: string;
let ws: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir: base, cleanup } = await tempDir("steering-sandbox-"));
  ws = path.join(base, "workspace");
  await mkdir(ws);
});
afterEach(async () => {
  await cleanup();
});

const tool = (sandbox = bubblewrapBackend()) => quickRunCommand(ws, { sandbox });

const run = (command: string, sandbox = bubblewrapBackend()) =>
  call(tool(sandbox), { command }, makeContext({ root: ws }));

const inWs = (...names: string[]) => path.join(ws, ...names);
const text = (...names: string[]) => readFile(inWs(...names), "utf8");

async function put(file: string, content: string) {
  await mkdir(path.dirname(inWs(file)), { recursive: true });
  await writeFile(inWs(file), content);
}

const SKILL = ".coworker/skills/deploy/SKILL.md";

/** Runs each command on its own: every one fails on a read-only file system or a busy mount point. */
async function expectRefused(...commands: string[]) {
  for (const command of commands) {
    const result = await run(command);
    expect(result.ok, command).toBe(false);
    expect(result.output, command).toMatch(/Read-only file system|Device or resource busy/);
  }
}

describe("run_command in the sandbox", () => {
  it("cannot add, change, move or remove a skill, and nothing reaches the host", async () => {
    await put(SKILL, "deploy steps\n");
    await expectRefused(
      "mkdir -p .coworker/skills/x && echo hi > .coworker/skills/x/SKILL.md",
      `echo pwned > ${SKILL}`,
      "rm -rf .coworker",
      "mv .coworker/skills .coworker/old",
      "mv .coworker old",
    );
    expect(await readdir(inWs(".coworker"))).toEqual(["skills"]);
    expect(await readdir(inWs(".coworker/skills"))).toEqual(["deploy"]);
    expect(await text(SKILL)).toBe("deploy steps\n");
    expect((await run(`cat ${SKILL}`)).output).toBe("deploy steps\n[exit code 0]");
  });

  it("cannot make .coworker where there is none: it is made on the host, empty, first", async () => {
    await expectRefused("mkdir -p .coworker/skills/x && echo hi > .coworker/skills/x/SKILL.md");
    expect(await readdir(inWs(".coworker"))).toEqual([]);
  });

  it("cannot change, move or remove AGENTS.md, but reads it", async () => {
    await put("AGENTS.md", "be kind\n");
    await expectRefused("echo x > AGENTS.md", "echo x >> AGENTS.md", "rm AGENTS.md", "mv AGENTS.md old.md");
    expect(await text("AGENTS.md")).toBe("be kind\n");
    expect((await run("cat AGENTS.md")).output).toBe("be kind\n[exit code 0]");
  });

  it("cannot create a missing AGENTS.md, and leaves none behind", async () => {
    const result = await run("echo x > AGENTS.md; ln -s notes.md AGENTS.md; wc -c < AGENTS.md");
    expect(result.output).toMatch(
      /^.*AGENTS\.md: Read-only file system\n.*File exists\n0\n\[exit code 0\]$/s,
    );
    expect(existsSync(inWs("AGENTS.md"))).toBe(false);
  });

  it("keeps a missing AGENTS.md out of reach of every command running at once, to the last", async () => {
    const [short, long] = await Promise.all([
      run("sleep 0.2; echo short"),
      run("sleep 1.5; echo x > AGENTS.md || echo refused"),
    ]);
    expect(short.output).toBe("short\n[exit code 0]");
    expect(long.output).toMatch(/refused\n\[exit code 0\]$/);
    expect(existsSync(inWs("AGENTS.md"))).toBe(false);
  });

  it("leaves the rest of the workspace writable", async () => {
    await put(SKILL, "deploy steps\n");
    await put("AGENTS.md", "be kind\n");
    const result = await run(
      "echo y > notes.txt && mkdir -p docs/sub && echo z > docs/sub/a.md && echo w > AGENTS.txt && mv notes.txt docs/ && rm AGENTS.txt && cat docs/notes.txt",
    );
    expect(result.output).toBe("y\n[exit code 0]");
    expect(await text("docs/notes.txt")).toBe("y\n");
    expect(await text("docs/sub/a.md")).toBe("z\n");
    expect(existsSync(inWs("AGENTS.txt"))).toBe(false);
  });
});

describe("run_command in the sandbox, where steering files are links", () => {
  it("cannot change what AGENTS.md or a skill's folder leads to, nor move its folder away", async () => {
    await put("docs/conventions.md", "be kind\n");
    await symlink("docs/conventions.md", inWs("AGENTS.md"));
    await put("tools/release/SKILL.md", "release steps\n");
    await mkdir(inWs(".coworker/skills"), { recursive: true });
    await symlink("../../tools/release", inWs(".coworker/skills/release"));
    await expectRefused(
      "echo x > docs/conventions.md",
      "echo x > tools/release/SKILL.md",
      "mv tools tools2",
      "mv docs/conventions.md docs/old.md",
    );
    expect(await text("docs/conventions.md")).toBe("be kind\n");
    expect(await text("tools/release/SKILL.md")).toBe("release steps\n");
    expect((await run("echo ok > tools/other.txt && echo ok > docs/other.md && cat AGENTS.md")).output).toBe(
      "be kind\n[exit code 0]",
    );
  });

  it("cannot create the file a dangling AGENTS.md link leads to, and leaves none behind", async () => {
    await symlink("docs/agents.md", inWs("AGENTS.md"));
    await expectRefused("mkdir -p docs; echo x > docs/agents.md");
    expect(await readdir(inWs("docs"))).toEqual([]);
  });

  it("binds nothing a link leads to outside the workspace, which no command sees", async () => {
    const outside = path.join(base, "team-skills");
    await mkdir(outside);
    await symlink(outside, inWs(".coworker"));
    const result = await run("mkdir -p .coworker/skills/x; echo ran");
    expect(result.output).toMatch(/ran\n\[exit code 0\]$/);
    expect(await readdir(outside)).toEqual([]);
  });

  it("keeps a steering file in the conversation's own upload folder read-only, and one in another's out of sight", async () => {
    const own = `${uploadFolderOf(TEST_TARGET)}/agents.md`;
    await put(own, "from the upload\n");
    await symlink(own, inWs("AGENTS.md"));
    const others = uploadFolderOf({ ...TEST_TARGET, channel: "D9" });
    await put(`${others}/peek/SKILL.md`, "SECRET\n");
    await mkdir(inWs(".coworker/skills"), { recursive: true });
    await symlink(`../../${others}/peek`, inWs(".coworker/skills/peek"));
    await expectRefused(`echo x > ${own}`);
    const look = await run("cat AGENTS.md; cat .coworker/skills/peek/SKILL.md; ls uploads");
    expect(look.output).toMatch(
      /^from the upload\n.*No such file or directory\nslack_T1_C1\n\[exit code 0\]$/s,
    );
    expect(await text(own)).toBe("from the upload\n");
  });
  it("shows no other conversation's uploads when a steering folder holds uploads/ (.coworker a link to the workspace)", async () => {
    await put(`${uploadFolderOf({ ...TEST_TARGET, channel: "D9" })}/secret.txt`, "SECRET\n");
    await symlink(".", inWs(".coworker"));
    const look = await run("ls uploads; cat uploads/*/*/secret.txt; echo x > notes.txt");
    expect(look.output).toMatch(
      /^slack_T1_C1\n.*No such file or directory\n.*Read-only file system\n\[exit code 1\]$/s,
    );
  });
});

describe("run_command in the sandbox, where .coworker or AGENTS.md at the workspace root is a link", () => {
  const skill = (name: string) => `---\nname: ${name}\ndescription: ${name} steps\n---\nDo it.\n`;
  const skillNames = async () => {
    const scan = await new SkillLoader(skillSources(ws, path.join(base, "data"), [])).scan();
    return [...scan.skills.keys()].sort();
  };
  const LOCK_NOTE =
    /\[the workspace root is read-only for commands: it holds \.coworker and AGENTS\.md, links on the way to a steering file/;

  beforeEach(async () => {
    await put("team/.coworker/skills/deploy/SKILL.md", skill("deploy"));
    await symlink("team/.coworker", inWs(".coworker"));
    await put("docs.md", "be kind\n");
    await symlink("docs.md", inWs("AGENTS.md"));
    await put("src/main.ts", "main\n");
    await put(".git/HEAD", "ref\n");
    await put("README.md", "readme\n");
  });

  it("cannot replace either link, so no skill or instructions are planted", async () => {
    expect(await skillNames()).toEqual(["deploy"]);
    const plant =
      "rm .coworker && mkdir -p .coworker/skills/evil && " +
      "printf -- '---\\nname: evil\\ndescription: evil\\n---\\nx\\n' > .coworker/skills/evil/SKILL.md";
    for (const command of [
      plant,
      "rm AGENTS.md && echo x > AGENTS.md",
      "mv .coworker gone && mkdir .coworker",
      "mv AGENTS.md gone.md",
      "ln -sfn src .coworker",
      "ln -sf src/main.ts AGENTS.md",
    ]) {
      const result = await run(command);
      expect(result.ok, command).toBe(false);
      expect(result.output, command).toMatch(/Read-only file system/);
      expect(result.output, command).toMatch(LOCK_NOTE);
    }
    expect(await readlink(inWs(".coworker"))).toBe("team/.coworker");
    expect(await readlink(inWs("AGENTS.md"))).toBe("docs.md");
    expect(await text("docs.md")).toBe("be kind\n");
    expect(await readdir(inWs("team/.coworker/skills"))).toEqual(["deploy"]);
    expect(existsSync(inWs("gone"))).toBe(false);
    expect(existsSync(inWs("gone.md"))).toBe(false);
    expect(await skillNames()).toEqual(["deploy"]);
  });

  it("keeps the work inside the root's folders and files going, but nothing new at the root", async () => {
    const result = await run(
      "echo y > src/new.ts && mkdir -p src/sub && echo z > src/sub/a.md && mv src/new.ts src/sub/ && " +
        "echo edited > README.md && echo more >> README.md && echo x > .git/ORIG_HEAD && cat .coworker/skills/deploy/SKILL.md AGENTS.md",
    );
    expect(result.output).toBe(`${skill("deploy")}be kind\n[exit code 0]`);
    expect(await text("src/sub/new.ts")).toBe("y\n");
    expect(await text("src/sub/a.md")).toBe("z\n");
    expect(await text("README.md")).toBe("edited\nmore\n");
    expect(await text(".git/ORIG_HEAD")).toBe("x\n");
    const fresh = await run("echo x > notes.txt");
    expect(fresh.ok).toBe(false);
    expect(fresh.output).toMatch(LOCK_NOTE);
    expect(fresh.output).toMatch(
      /a person can make each link the real file or folder it leads to, to lift this\]$/,
    );
    expect(existsSync(inWs("notes.txt"))).toBe(false);
  });

  it("refuses commands, saying why, when the root holds too many entries to keep in place", async () => {
    await Promise.all(Array.from({ length: MAX_LOCKED_ENTRIES }, (_, i) => writeFile(inWs(`f${i}.txt`), "")));
    const result = await run("echo ran > src/ran.txt");
    expect(result).toMatchObject({ ok: false, summary: "too many entries to lock" });
    expect(result.output).toMatch(
      /^commands cannot run in this workspace: the workspace root is to be kept read-only for commands, for \.coworker and AGENTS\.md, links .* at most 1000 can be .* A person can make each link the real file or folder it leads to, or move entries into a folder\.$/,
    );
    expect(existsSync(inWs("src/ran.txt"))).toBe(false);
  });

  it("doctor warns that the root is read-only for commands", async () => {
    const config = configSchema.parse({ workspace: { root: ws } });
    expect(await shellSandboxCheck(config, undefined, 1000).run(new AbortController().signal)).toEqual({
      status: "warn",
      summary:
        "bubblewrap sandbox, no network; .coworker and AGENTS.md, links on the way to a steering file (.coworker/ or AGENTS.md), make the workspace root read-only for commands (nothing can be created, renamed or removed directly in it)",
      fix: "make each link the real file or folder it leads to, to lift this",
    });
  });

  it("starts even when an entry listed for the sandbox is gone by then", async () => {
    const plan = await bubblewrapBackend().plan({
      argv: ["bash", "-c", "echo ok > src/a.txt && cat src/a.txt"],
      cwd: ws,
      env: { PATH: "/usr/bin:/bin" },
      roots: [ws],
      readOnly: { paths: [], pinned: [], locked: [{ path: ws, entries: [inWs("gone"), inWs("src")] }] },
    });
    const ran = spawnPlanSync(plan);
    expect(ran.stdout).toBe("ok\n");
    expect(existsSync(inWs("gone"))).toBe(false);
  });
});

describe("run_command in the sandbox, where links lead on to further links", () => {
  it("cannot replace a link in a folder below the root on the way to a steering file", async () => {
    await put("CLAUDE.md", "be kind\n");
    await mkdir(inWs("docs/guide"), { recursive: true });
    await symlink("../CLAUDE.md", inWs("docs/AGENTS.md"));
    await symlink("docs/AGENTS.md", inWs("AGENTS.md"));
    await put("tools/y/SKILL.md", "---\nname: x\ndescription: x steps\n---\nDo it.\n");
    await symlink("y", inWs("tools/x"));
    await mkdir(inWs(".coworker/skills"), { recursive: true });
    await symlink("../../tools/x", inWs(".coworker/skills/x"));
    await expectRefused(
      "rm docs/AGENTS.md && echo evil > docs/AGENTS.md",
      "rm tools/x && mkdir tools/x && echo evil > tools/x/SKILL.md",
      "mv docs/AGENTS.md docs/old.md",
      "echo x > docs/new.md",
    );
    expect(await readlink(inWs("docs/AGENTS.md"))).toBe("../CLAUDE.md");
    expect(await readlink(inWs("tools/x"))).toBe("y");
    expect(await text("AGENTS.md")).toBe("be kind\n");
    const note = await run("echo x > docs/new.md");
    expect(note.output).toMatch(
      /\[the workspace root and docs\/ and tools\/ are read-only for commands: they hold AGENTS\.md and docs\/AGENTS\.md and tools\/x, links/,
    );
    expect((await run("echo ok > docs/guide/a.md && cat docs/guide/a.md")).output).toBe("ok\n[exit code 0]");
  });
});

describe("run_command in the sandbox, where a root link leads deep", () => {
  it("keeps the folders on the way pinned inside the locked root", async () => {
    await put("a/b/c.md", "be kind\n");
    await symlink("a/b/c.md", inWs("AGENTS.md"));
    await expectRefused("mv a/b a/b2 && mkdir a/b && echo evil > a/b/c.md");
    expect(await text("AGENTS.md")).toBe("be kind\n");
    expect((await run("echo ok > a/b/d.md && echo ok > a/e.md")).ok).toBe(true);
  });
});

describe("run_command in the sandbox, where .coworker and AGENTS.md at the root are real", () => {
  it("lets a command create, rename and remove entries at the root", async () => {
    await put(SKILL, "deploy steps\n");
    await put("AGENTS.md", "be kind\n");
    const result = await run(
      "echo x > new.txt && mkdir made && mv new.txt made/ && mv made kept && rm -r kept",
    );
    expect(result.output).toBe("(no output)\n[exit code 0]");
    expect((await lstat(inWs(".coworker"))).isDirectory()).toBe(true);
    expect((await readdir(ws)).sort()).toEqual([".coworker", "AGENTS.md", "uploads"]);
  });
});

describe("run_command with the sandbox off", () => {
  it("enforces nothing and makes nothing on the host for it", async () => {
    const result = await run("echo x > AGENTS.md && ls -A", unsandboxedBackend());
    expect(result.output).toBe("AGENTS.md\n[exit code 0]");
  });
});
