import { execFileSync } from "node:child_process";
import { mkdir, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  AGENTS_MD_FRESH_MS,
  AgentsMdReader,
  readAgentsMd,
  readTextPrefix,
} from "../../src/engine/session-knowledge.js";
import { createWorkspacePaths } from "../../src/tools/files/workspace-paths.js";
import { tempDir } from "../support/engine-fixtures.js";

let root: string;
let outside: string;
let cleanups: (() => Promise<void>)[] = [];

beforeEach(async () => {
  const ws = await tempDir();
  const other = await tempDir("coworker-outside-");
  cleanups = [ws.cleanup, other.cleanup];
  root = ws.dir;
  outside = other.dir;
});
afterEach(async () => {
  for (const cleanup of cleanups) await cleanup();
});

const paths = () => createWorkspacePaths({ root });

describe("AgentsMdReader", () => {
  it("reads AGENTS.md once while it is unchanged, and afresh after an edit, a deletion or a link out", async () => {
    const reads: string[] = [];
    let clock = 0;
    // Each look is a second after the last: every one may look at the file again.
    const reader = new AgentsMdReader(
      paths(),
      1000,
      (file, max) => {
        reads.push(file);
        return readTextPrefix(file, max);
      },
      () => (clock += AGENTS_MD_FRESH_MS),
    );
    const file = path.join(root, "AGENTS.md");
    expect(await reader.current()).toEqual({});
    expect(await reader.current()).toEqual({});
    await writeFile(file, "Use pnpm.\n");
    reads.length = 0;
    expect(await reader.current()).toEqual({ text: "Use pnpm.\n" });
    expect(await reader.current()).toEqual({ text: "Use pnpm.\n" });
    expect(reads).toHaveLength(1);
    await writeFile(file, "Use npm.\n");
    expect(await reader.current()).toEqual({ text: "Use npm.\n" });
    expect(reads).toHaveLength(2);
    await rm(file);
    expect(await reader.current()).toEqual({});
    await writeFile(path.join(outside, "secret.txt"), "TOP-SECRET");
    await symlink(path.join(outside, "secret.txt"), file);
    const part = await reader.current();
    expect(part.notice).toMatch(/outside the workspace/);
    expect(JSON.stringify(part)).not.toContain("TOP-SECRET");
  });
});

describe("AgentsMdReader freshness", () => {
  it("lets a look serve the sessions of the next second without looking again", async () => {
    let clock = 0;
    const reader = new AgentsMdReader(paths(), 1000, readTextPrefix, () => clock);
    const file = path.join(root, "AGENTS.md");
    await writeFile(file, "first");
    expect(await reader.current()).toEqual({ text: "first" });
    await writeFile(file, "second, longer");
    clock = AGENTS_MD_FRESH_MS - 1;
    expect(await reader.current()).toEqual({ text: "first" });
    clock = AGENTS_MD_FRESH_MS;
    expect(await reader.current()).toEqual({ text: "second, longer" });
  });
});

describe("readAgentsMd", () => {
  it("reads the workspace's AGENTS.md; a missing one is no failure", async () => {
    expect(await readAgentsMd(paths(), 1000)).toEqual({});
    await writeFile(path.join(root, "AGENTS.md"), "Use pnpm, not npm.\n");
    expect(await readAgentsMd(paths(), 1000)).toEqual({ text: "Use pnpm, not npm.\n" });
  });

  it("reads only a prefix, long enough for the instructions to see the file exceeds the cap", async () => {
    await writeFile(path.join(root, "AGENTS.md"), "x".repeat(100_000));
    const part = await readAgentsMd(paths(), 100);
    expect(part.text?.length).toBe(404);
  });

  it("refuses an AGENTS.md symlink pointing outside the workspace, with a notice", async () => {
    await writeFile(path.join(outside, "secret.txt"), "TOP-SECRET");
    await symlink(path.join(outside, "secret.txt"), path.join(root, "AGENTS.md"));
    const part = await readAgentsMd(paths(), 1000);
    expect(part.text).toBeUndefined();
    expect(part.notice).toMatch(
      /^The workspace's AGENTS.md was not read \(path "AGENTS.md" resolves to .* outside the workspace/,
    );
    expect(JSON.stringify(part)).not.toContain("TOP-SECRET");
  });

  it("does not hang on a FIFO or read a directory named AGENTS.md", async () => {
    execFileSync("mkfifo", [path.join(root, "AGENTS.md")]);
    expect((await readAgentsMd(paths(), 1000)).notice).toContain("it is not a regular file");
    const second = await tempDir();
    cleanups.push(second.cleanup);
    await mkdir(path.join(second.dir, "AGENTS.md"));
    const part = await readAgentsMd(createWorkspacePaths({ root: second.dir }), 1000);
    expect(part).toEqual({
      notice: "The workspace's AGENTS.md was not read (it is not a regular file); continuing without it.",
    });
  });

  it("reports other read failures as a notice", async () => {
    await writeFile(path.join(root, "AGENTS.md"), "x");
    const denied = Object.assign(new Error("EACCES: permission denied"), { code: "EACCES" });
    const part = await readAgentsMd(paths(), 1000, async () => Promise.reject(denied));
    expect(part).toEqual({
      notice: "The workspace's AGENTS.md was not read (AGENTS.md: permission denied); continuing without it.",
    });
  });

  it("reads the AGENTS.md it checked, even when a link to a host file takes its place before the read", async () => {
    // Another session's command in the same workspace can swap the file between check and read.
    const secret = path.join(outside, "secret.txt");
    await writeFile(secret, "host secret");
    const file = path.join(root, "AGENTS.md");
    await writeFile(file, "Use pnpm.\n");
    const swapping = async (opened: string, max: number) => {
      await rm(file);
      await symlink(secret, file);
      return readTextPrefix(opened, max);
    };
    expect(await readAgentsMd(paths(), 1000, swapping)).toEqual({ text: "Use pnpm.\n" });
  });

  it("readTextPrefix stops at maxBytes", async () => {
    await writeFile(path.join(root, "f.txt"), "abcdefgh");
    expect(await readTextPrefix(path.join(root, "f.txt"), 3)).toBe("abc");
    expect(await readTextPrefix(path.join(root, "f.txt"), 100)).toBe("abcdefgh");
  });
});
