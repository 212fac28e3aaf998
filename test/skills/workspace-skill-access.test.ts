/**
 * The workspace's skills are read without following a link the agent planted: `.coworker`,
 * `.coworker/skills` or a skill's folder made a link to a folder outside the workspace loads
 * nothing from there (refused with why, logged once), also when the swap happens between a check
 * and the use it allowed (made deterministic by swapping the moment a realpath or the listing of
 * the skills folder has answered): a SKILL.md is read from the skills folder held open since its
 * check, or refused. A skill's files are neither listed nor read through a folder swapped after
 * the scan. The operator's folders keep following their links. A scan opens each SKILL.md once,
 * from the skills folder it holds open, and refuses a pipe or folder in its place; a refusal is
 * kept until the file changes (a chmod included), so the next scans neither open it nor make a
 * new scan, unless it was a race (the path changed while opened). A skill's files
 * are listed from a bounded number of folders, however deep the agent nests them, and a SKILL.md
 * or a file beside it is read no further than the size it was checked at. The service's own files
 * are off limits to the workspace's skills even inside the workspace.
 */
import {
  appendFileSync,
  chmodSync,
  mkdirSync,
  renameSync,
  rmSync,
  type Stats,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { execFileSync } from "node:child_process";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createLoadSkillTool } from "../../src/skills/load-skill-tool.js";
import { SkillLibrary } from "../../src/skills/skill-library.js";
import { SkillLoader, type SkillScan } from "../../src/skills/skill-loader.js";
import type { ToolContext } from "../../src/core/tool.js";
import { request } from "../support/engine-fixtures.js";
import type { StatHook } from "../support/stat-hook.js";
import { skillMd, skillsFixture, writeSkill } from "./support.js";

/** Called with the path each realpath was asked about, once it has answered. */
const realpathHook = vi.hoisted(() => ({ after: undefined as ((asked: string) => void) | undefined }));
const statHook = vi.hoisted((): StatHook => ({ after: undefined }));
/**
 * Called with the stats of every file or folder opened, as soon as it is open; and before, with
 * the path it is about to be opened by: true refuses it as EACCES (the tests run as root, whom no
 * file mode stops).
 */
const openHook = vi.hoisted(() => ({
  after: undefined as ((opened: Stats) => void) | undefined,
  before: undefined as ((opening: string) => boolean) | undefined,
}));
/** Called with the names each folder listing found, once it has answered. */
const readdirHook = vi.hoisted(() => ({ after: undefined as ((names: string[]) => void) | undefined }));

vi.mock("node:fs/promises", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:fs/promises")>();
  const { reportStats } = await import("../support/stat-hook.js");
  const realpath = async (...args: Parameters<typeof actual.realpath>) => {
    const real = await actual.realpath(...args);
    realpathHook.after?.(String(args[0]));
    return real;
  };
  const open = async (...args: Parameters<typeof actual.open>) => {
    if (openHook.before?.(String(args[0])))
      throw Object.assign(new Error(`EACCES: permission denied, open '${args[0]}'`), { code: "EACCES" });
    const handle = await actual.open(...args);
    if (openHook.after) openHook.after(await handle.stat());
    return reportStats(handle, String(args[0]), statHook);
  };
  const readdir = (async (...args: Parameters<typeof actual.readdir>) => {
    const entries = await actual.readdir(...args);
    readdirHook.after?.(
      (entries as unknown[]).map((entry) => String((entry as { name?: unknown }).name ?? entry)),
    );
    return entries;
  }) as typeof actual.readdir;
  return { ...actual, realpath, open, readdir };
});

vi.mock("node:fs", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:fs")>();
  const realpathSync = Object.assign(
    (...args: Parameters<typeof actual.realpathSync>) => {
      const real = actual.realpathSync(...args);
      realpathHook.after?.(String(args[0]));
      return real;
    },
    { native: actual.realpathSync.native },
  );
  return { ...actual, realpathSync };
});

let fixture: Awaited<ReturnType<typeof skillsFixture>>;
afterEach(async () => {
  realpathHook.after = undefined;
  statHook.after = undefined;
  openHook.after = undefined;
  openHook.before = undefined;
  readdirHook.after = undefined;
  await fixture?.cleanup();
});

const context = {
  request: request(),
  facts: { downloadedFiles: new Set<string>() },
} as unknown as ToolContext;

/** The workspace folders the agent may turn into a link, relative to the workspace. */
const SWAPPABLE = [".coworker", ".coworker/skills", ".coworker/skills/notes"] as const;

/**
 * A valid skill "notes" in the workspace, and outside it a copy of the tree below `swapped`
 * holding a host file as notes/SKILL.md. Returns where that copy is.
 */
function plant(swapped: string): string {
  writeSkill(fixture.workspaceSkills, "notes", skillMd("notes", "the team's notes"));
  const outside = path.join(fixture.root, "host", path.basename(swapped));
  const below = path.relative(
    path.join(fixture.workspace, swapped),
    path.join(fixture.workspaceSkills, "notes"),
  );
  writeSkill(path.dirname(path.join(outside, below)), "notes", skillMd("notes", "HOST FILE"));
  return outside;
}

/** Make the workspace folder `swapped` a link to `target`, keeping the real one aside. */
function swapForLink(swapped: string, target: string): void {
  const folder = path.join(fixture.workspace, swapped);
  renameSync(folder, path.join(path.dirname(folder), `.${path.basename(folder)}-before`));
  symlinkSync(target, folder);
}

/** The scan found no skill, and one problem: a folder or file that changed while it was being read. */
function expectRefusedAsRaced(scan: SkillScan): void {
  expect([...scan.skills.values()]).toEqual([]);
  expect(scan.problems).toEqual([
    expect.objectContaining({
      reason: expect.stringMatching(/^not read: .*changed while it was being used/),
    }),
  ]);
}

describe("workspace skills and the service's own files", () => {
  it("never reads a skill through a link into the service's data folder inside the workspace", async () => {
    fixture = await skillsFixture();
    // A data folder kept inside the workspace (workspace.root "."), holding what parses as a skill.
    const data = path.join(fixture.workspace, "data");
    writeSkill(path.join(data, "sessions"), "notes", skillMd("notes", "SERVICE RECORD"));
    mkdirSync(fixture.workspaceSkills, { recursive: true });
    symlinkSync(path.join(data, "sessions", "notes"), path.join(fixture.workspaceSkills, "notes"));
    const open = await new SkillLoader(fixture.sources).scan();
    expect([...open.skills.values()].map((skill) => skill.description)).toEqual(["SERVICE RECORD"]);
    const guarded = await new SkillLoader(fixture.sources, { offLimits: [data] }).scan();
    expect([...guarded.skills.values()]).toEqual([]);
    expect(guarded.problems).toEqual([
      expect.objectContaining({ reason: expect.stringMatching(/^not read: /) }),
    ]);
  });
});

describe("workspace skills and links", () => {
  it.each(SWAPPABLE)(
    "a link at %s out of the workspace loads nothing from there, logged once",
    async (swapped) => {
      fixture = await skillsFixture();
      swapForLink(swapped, plant(swapped));
      writeSkill(fixture.dataSkills, "ops", skillMd("ops", "the server's"));
      const warn = vi.fn();
      const loader = new SkillLoader(fixture.sources, { logger: { warn } });
      const scan = await loader.scan();
      expect([...scan.skills.values()].map((skill) => skill.description)).toEqual(["the server's"]);
      expect(scan.problems).toEqual([
        expect.objectContaining({
          reason: expect.stringMatching(
            /^not read: path ".*" resolves to .*host.*, which is outside the workspace/,
          ),
        }),
      ]);
      expect(await loader.scan()).toBe(scan);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(warn.mock.calls[0]![1]).toBe(`skill skipped: ${scan.problems[0]!.reason}`);
    },
  );

  it.each(SWAPPABLE.slice(0, 2))(
    "%s swapped for a link between the check of the skills folder and its opening is refused",
    async (swapped) => {
      fixture = await skillsFixture();
      const outside = plant(swapped);
      realpathHook.after = (asked) => {
        if (!asked.endsWith(path.join(".coworker", "skills"))) return;
        realpathHook.after = undefined;
        swapForLink(swapped, outside);
      };
      const scan = await fixture.library.scan();
      expect(realpathHook.after).toBeUndefined();
      expectRefusedAsRaced(scan);
    },
  );

  it.each(SWAPPABLE.slice(0, 2))(
    "%s swapped for a link once the skills folder was listed: SKILL.md is read from the folder held open",
    async (swapped) => {
      fixture = await skillsFixture();
      const outside = plant(swapped);
      readdirHook.after = (names) => {
        if (!names.includes("notes")) return;
        readdirHook.after = undefined;
        swapForLink(swapped, outside);
      };
      const scan = await fixture.library.scan();
      expect(readdirHook.after).toBeUndefined();
      expect([...scan.skills.values()].map((skill) => skill.description)).toEqual(["the team's notes"]);
    },
  );

  it("a skill's folder swapped for a link once the skills folder was listed is refused", async () => {
    fixture = await skillsFixture();
    const swapped = path.join(".coworker", "skills", "notes");
    const outside = plant(swapped);
    readdirHook.after = (names) => {
      if (!names.includes("notes")) return;
      readdirHook.after = undefined;
      swapForLink(swapped, outside);
    };
    const scan = await fixture.library.scan();
    expect(readdirHook.after).toBeUndefined();
    expectRefusedAsRaced(scan);
  });

  it("a skill's folder linked within the workspace, swapped for a link out between the check of its SKILL.md and its read, is refused", async () => {
    fixture = await skillsFixture();
    const shared = writeSkill(
      path.join(fixture.workspace, "shared"),
      "notes",
      skillMd("notes", "the team's notes"),
    );
    mkdirSync(fixture.workspaceSkills, { recursive: true });
    symlinkSync(shared, path.join(fixture.workspaceSkills, "notes"));
    const outside = writeSkill(path.join(fixture.root, "host"), "notes", skillMd("notes", "HOST FILE"));
    realpathHook.after = (asked) => {
      if (!asked.endsWith(path.join("skills", "notes", "SKILL.md"))) return;
      realpathHook.after = undefined;
      swapForLink(path.join("shared", "notes"), outside);
    };
    const scan = await fixture.library.scan();
    expect(realpathHook.after).toBeUndefined();
    expectRefusedAsRaced(scan);
  });

  it("lists and reads no file through a skill folder swapped for a link after the scan", async () => {
    fixture = await skillsFixture();
    writeSkill(fixture.workspaceSkills, "kit", skillMd("kit", "A kit"), { "ref.md": "REFERENCE" });
    const library = new SkillLibrary({
      loader: new SkillLoader(fixture.sources),
      switches: fixture.switches,
      workspaceRoot: fixture.workspace,
      scanIntervalMs: 60_000,
    });
    const tool = createLoadSkillTool(library);
    expect((await tool.execute({ name: "kit" }, context)).output).toContain("- .coworker/skills/kit/ref.md");
    expect(await tool.execute({ name: "kit", file: "ref.md" }, context)).toEqual({
      ok: true,
      output: "REFERENCE",
    });

    const outside = path.join(fixture.root, "host", "kit");
    writeSkill(path.dirname(outside), "kit", skillMd("kit", "A kit"), { "secret.txt": "SECRET" });
    swapForLink(path.join(".coworker", "skills", "kit"), outside);
    const listing = await tool.execute({ name: "kit" }, context);
    expect(listing.ok).toBe(true);
    expect(listing.output).not.toContain("secret.txt");
    const read = await tool.execute({ name: "kit", file: "secret.txt" }, context);
    expect(read.ok).toBe(false);
    expect(read.output).toMatch(/outside the workspace/);
    expect(read.output).not.toContain("SECRET");
  });

  it("the operator's folders still follow their links: a linked source, skill folder and file beside", async () => {
    fixture = await skillsFixture();
    const elsewhere = path.join(fixture.root, "shared");
    writeSkill(elsewhere, "runbook", skillMd("runbook", "kept in a shared folder"), { "steps.md": "STEPS" });
    mkdirSync(path.join(elsewhere, "linked-skills"));
    symlinkSync(path.join(elsewhere, "runbook"), path.join(elsewhere, "linked-skills", "runbook"));
    symlinkSync(path.join(elsewhere, "linked-skills"), fixture.extra);
    const scan = await fixture.library.scan();
    expect([...scan.skills.keys()]).toEqual(["runbook"]);
    const tool = createLoadSkillTool(fixture.library);
    expect((await tool.execute({ name: "runbook" }, context)).output).toContain("- steps.md");
    expect(await tool.execute({ name: "runbook", file: "steps.md" }, context)).toEqual({
      ok: true,
      output: "STEPS",
    });
  });
});

describe("a workspace SKILL.md", () => {
  it("is opened once per scan, from the skills folder held open: the workspace root is walked from once", async () => {
    // Each SKILL.md was confined and walked to from the workspace root on its own, then opened a
    // second time through /proc/self/fd to read it: most of a cold scan of 200 skills (264 ms).
    fixture = await skillsFixture();
    const files = ["alpha", "beta", "gamma"].map((name) =>
      path.join(writeSkill(fixture.workspaceSkills, name, skillMd(name, `the ${name} steps`)), "SKILL.md"),
    );
    const opened: Stats[] = [];
    openHook.after = (stats) => opened.push(stats);
    const scan = await new SkillLoader(fixture.sources).scan();
    openHook.after = undefined;
    expect([...scan.skills.keys()].sort()).toEqual(["alpha", "beta", "gamma"]);
    const opens = (file: string) => {
      const { dev, ino } = statSync(file);
      return opened.filter((stats) => stats.dev === dev && stats.ino === ino).length;
    };
    expect(files.map(opens)).toEqual([1, 1, 1]);
    expect(opens(fixture.workspace)).toBe(1);
  });

  it("that is a pipe or a folder is refused as not a regular file, without waiting on the pipe", async () => {
    fixture = await skillsFixture();
    mkdirSync(path.join(fixture.workspaceSkills, "piped"), { recursive: true });
    execFileSync("mkfifo", [path.join(fixture.workspaceSkills, "piped", "SKILL.md")]);
    mkdirSync(path.join(fixture.workspaceSkills, "nested", "SKILL.md"), { recursive: true });
    const scan = await fixture.library.scan();
    expect([...scan.skills.values()]).toEqual([]);
    expect(scan.problems.map((problem) => problem.reason)).toEqual([
      "SKILL.md is not a regular file",
      "SKILL.md is not a regular file",
    ]);
  });

  it("is read only as far as its stat judged it, however it grows meanwhile", async () => {
    // The size check (256 KB) is made on the open file's stat; the agent's commands may append
    // to the file before it is read, and the read took all of it (up to the sandbox's file size
    // limit, a gigabyte by default) into memory and the parser.
    fixture = await skillsFixture();
    const text = skillMd("notes", "the team's notes");
    const file = path.join(writeSkill(fixture.workspaceSkills, "notes", text), "SKILL.md");
    statHook.after = (opened) => {
      if (!opened.endsWith("/SKILL.md")) return;
      statHook.after = undefined;
      appendFileSync(file, "GROWN ".repeat(100_000));
    };
    const scan = await fixture.library.scan();
    expect(statHook.after).toBeUndefined();
    expect(scan.skills.get("notes")?.body.trim()).toBe("Steps for notes.");
  });
});

describe("a refused workspace SKILL.md", () => {
  it("is not opened again, nor the scan made anew, until it changes: a pipe, and a link out of the workspace", async () => {
    fixture = await skillsFixture();
    writeSkill(fixture.workspaceSkills, "notes", skillMd("notes", "the team's notes"));
    const pipe = path.join(fixture.workspaceSkills, "piped", "SKILL.md");
    mkdirSync(path.dirname(pipe), { recursive: true });
    execFileSync("mkfifo", [pipe]);
    const host = path.join(
      writeSkill(path.join(fixture.root, "host"), "linked", skillMd("linked", "HOST")),
      "SKILL.md",
    );
    mkdirSync(path.join(fixture.workspaceSkills, "linked"));
    symlinkSync(host, path.join(fixture.workspaceSkills, "linked", "SKILL.md"));
    const loader = new SkillLoader(fixture.sources);
    const first = await loader.scan();
    expect(first.problems.map((problem) => problem.reason).sort()).toEqual([
      "SKILL.md is not a regular file",
      expect.stringMatching(/^not read: .*linked\/SKILL\.md.*outside the workspace/),
    ]);

    const { dev, ino } = statSync(pipe);
    const opened: Stats[] = [];
    const confined: string[] = [];
    openHook.after = (stats) => opened.push(stats);
    realpathHook.after = (asked) => confined.push(asked);
    expect(await loader.scan()).toBe(first);
    expect(opened.filter((stats) => stats.dev === dev && stats.ino === ino)).toEqual([]);
    expect(confined.filter((asked) => asked.includes("linked"))).toEqual([]);

    rmSync(pipe);
    writeFileSync(pipe, skillMd("piped", "a file now"));
    expect((await loader.scan()).skills.get("piped")?.description).toBe("a file now");
  });

  it("is tried again when it was refused for changing while it was opened, a race that says nothing of the file", async () => {
    fixture = await skillsFixture();
    const swapped = path.join(".coworker", "skills", "notes");
    const outside = plant(swapped);
    const folder = path.join(fixture.workspace, swapped);
    const loader = new SkillLoader(fixture.sources);
    openHook.before = (opening) => {
      if (!opening.endsWith("/notes")) return false;
      openHook.before = undefined;
      swapForLink(swapped, outside);
      return false;
    };
    const raced = await loader.scan();
    expect(openHook.before).toBeUndefined();
    expect(raced.problems.map((problem) => problem.reason)).toEqual([
      expect.stringMatching(/^not read: .*changed while it was being used/),
    ]);
    rmSync(folder);
    renameSync(path.join(path.dirname(folder), ".notes-before"), folder);
    expect((await loader.scan()).skills.get("notes")?.description).toBe("the team's notes");
  });

  it("that cannot be opened is not tried again until it changes, a chmod included", async () => {
    fixture = await skillsFixture();
    const file = path.join(
      writeSkill(fixture.workspaceSkills, "locked", skillMd("locked", "readable")),
      "SKILL.md",
    );
    let attempts = 0;
    let locked = true;
    openHook.before = (opening) => {
      if (!opening.endsWith("/SKILL.md")) return false;
      attempts += 1;
      return locked;
    };
    const loader = new SkillLoader(fixture.sources);
    const first = await loader.scan();
    expect(first.problems.map((problem) => problem.reason)).toEqual([
      expect.stringMatching(/^unreadable: .*EACCES/),
    ]);
    expect(await loader.scan()).toBe(first);
    expect(attempts).toBe(1);

    locked = false;
    chmodSync(file, 0o600);
    expect((await loader.scan()).skills.get("locked")?.description).toBe("readable");
    expect(attempts).toBe(2);
  });
});

describe("the files beside a workspace skill", () => {
  it("are read only as far as the size checked, however they grow meanwhile", async () => {
    fixture = await skillsFixture();
    const kit = writeSkill(fixture.workspaceSkills, "kit", skillMd("kit", "A kit"), {
      "ref.md": "REFERENCE",
    });
    statHook.after = (opened) => {
      if (!opened.endsWith("/ref.md")) return;
      statHook.after = undefined;
      appendFileSync(path.join(kit, "ref.md"), "GROWN ".repeat(100_000));
    };
    const tool = createLoadSkillTool(fixture.library);
    expect(await tool.execute({ name: "kit", file: "ref.md" }, context)).toEqual({
      ok: true,
      output: "REFERENCE",
    });
    expect(statHook.after).toBeUndefined();
  });

  it("are listed from a bounded number of folders, however deep the agent nests them", async () => {
    // The walk holds each folder above the one it lists open, with its path, and nothing limits
    // how deep a walk relative to open folders goes: 20,000 levels ran the process out of heap.
    fixture = await skillsFixture();
    const kit = writeSkill(fixture.workspaceSkills, "kit", skillMd("kit", "A kit"), {
      "ref.md": "REFERENCE",
      "scripts/run.sh": "echo",
    });
    const deep = path.join(kit, "z/".repeat(1_000));
    mkdirSync(deep, { recursive: true });
    writeFileSync(path.join(deep, "bottom.md"), "BOTTOM");
    const skill = (await fixture.library.scan()).skills.get("kit")!;
    expect(await fixture.library.filesBeside(skill)).toEqual(["ref.md", "scripts/run.sh"]);
  });
});
