/**
 * search_files' ripgrep engine does not even read what the caller may not see: other
 * conversations' folders under uploads/ and the service's own files reach rg as exclusion globs
 * anchored to the searched directory, after the caller's glob, so a folder of the same name deeper
 * down is still searched and no glob of the model's re-includes them. The matches are still
 * dropped afterwards (conversation-uploads.test.ts covers what the model gets back).
 */
import { execFileSync } from "node:child_process";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { ThreadTarget } from "../../src/core/thread-target.js";
import { conversationUploadFolder, uploadFolderOf } from "../../src/core/upload-folders.js";
import { exclusionGlobs, searchWithRipgrep } from "../../src/tools/files/search-backends.js";
import { createSearchFilesTool } from "../../src/tools/files/search-files.js";
import { perSessionUploadFolder } from "../support/per-session-upload-folder.js";
import { call, makeContext } from "./support/tool-context.js";
import { useTempWorkspace } from "./support/tool-workspace.js";

const ANA: ThreadTarget = { platform: "slack", workspace: "T1", channel: "D1", thread: "1700000000.000100" };
const BOB: ThreadTarget = { platform: "slack", workspace: "T1", channel: "C2", thread: "1700000500.000500" };
const DATA = ".coworker-data";

const temp = useTempWorkspace("search-exclusions-", (dir) => [path.join(dir, DATA)]);

/** Lay out `files` (workspace-relative) in the temporary workspace, each holding "needle". */
async function lay(files: readonly string[]): Promise<void> {
  for (const file of files) {
    await mkdir(path.join(temp.dir, path.dirname(file)), { recursive: true });
    await writeFile(path.join(temp.dir, file), "needle\n");
  }
}

/** A stand-in for rg that records its arguments and finds nothing; returns a reader of them. */
async function fakeRipgrep(): Promise<{ command: string; argv: () => Promise<string[]> }> {
  const command = path.join(temp.dir, "fake-rg");
  await writeFile(command, `#!/bin/sh\nprintf '%s\\0' "$@" > "${command}.argv"\nexit 1\n`);
  await chmod(command, 0o755);
  return {
    command,
    argv: async () => (await readFile(`${command}.argv`, "utf8")).split("\0").slice(0, -1),
  };
}

/** The values of rg's --glob options in `argv`, in order. */
const globsIn = (argv: readonly string[]) =>
  argv.flatMap((arg, i) => (argv[i - 1] === "--glob" ? [arg] : []));

const hasRipgrep = (() => {
  try {
    execFileSync("rg", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

describe("search_files with ripgrep and what the caller may not see", () => {
  const escaped = (name: string) => name.replace(/[^A-Za-z0-9]/g, (c) => `\\${c}`);

  it("hands rg anchored exclusion globs for other conversations' uploads and the service's files", async () => {
    await lay([
      `${uploadFolderOf(ANA)}/payslip.txt`,
      `uploads/${perSessionUploadFolder(ANA)}/old.txt`,
      `${uploadFolderOf(BOB)}/mine.txt`,
      `${DATA}/history.txt`,
      "notes.txt",
    ]);
    const rg = await fakeRipgrep();
    const tool = createSearchFilesTool({ workspace: temp.workspace, ripgrepCommand: rg.command });
    const asBob = makeContext({ root: temp.dir, metadata: { target: BOB } });

    await call(tool, { pattern: "needle", glob: "**" }, asBob);
    const globs = globsIn(await rg.argv());
    const exclusions = [
      `!/uploads/${escaped(conversationUploadFolder(ANA))}`,
      `!/uploads/${escaped(perSessionUploadFolder(ANA))}`,
      `!/${escaped(DATA)}`,
    ];
    expect(globs).toEqual(expect.arrayContaining(exclusions));
    expect(globs.filter((glob) => glob.includes(conversationUploadFolder(BOB)))).toEqual([]);
    // After the caller's glob, which would otherwise take them back.
    expect(globs.indexOf("**")).toBeLessThan(Math.min(...exclusions.map((glob) => globs.indexOf(glob))));

    // Relative to the searched folder; none where no hidden path lies below it.
    await call(tool, { pattern: "needle", path: "uploads" }, asBob);
    expect(globsIn(await rg.argv())).toEqual(
      expect.arrayContaining([`!/${escaped(conversationUploadFolder(ANA))}`]),
    );
    await call(tool, { pattern: "needle", path: uploadFolderOf(BOB) }, asBob);
    expect(globsIn(await rg.argv())).toEqual(["!.git", "!node_modules"]);
  });

  it("without a conversation, excludes every folder under uploads/", async () => {
    await lay([`${uploadFolderOf(ANA)}/payslip.txt`, `${uploadFolderOf(BOB)}/mine.txt`]);
    const rg = await fakeRipgrep();
    const tool = createSearchFilesTool({ workspace: temp.workspace, ripgrepCommand: rg.command });
    await call(tool, { pattern: "needle" }, makeContext({ root: temp.dir, metadata: {} }));
    expect(globsIn(await rg.argv())).toEqual(
      expect.arrayContaining([
        `!/uploads/${escaped(conversationUploadFolder(ANA))}`,
        `!/uploads/${escaped(conversationUploadFolder(BOB))}`,
      ]),
    );
  });

  it.skipIf(!hasRipgrep)(
    "rg skips exactly those paths, odd names included, and searches a same-named folder deeper down",
    async () => {
      const odd = ["we ird*[x]{y}", "back\\slash", "trail ", "!bang", "#hash", "é%.-_", "new\nline", ".dot"];
      await lay([
        ...odd.map((name) => `uploads/${name}/f.txt`),
        "uploads/kept/f.txt",
        "uploads/kept-too.txt",
        "sub/uploads/we ird*[x]{y}/f.txt",
        `sub/${DATA}/f.txt`,
        `${DATA}/f.txt`,
      ]);
      const hidden = [...odd.map((name) => path.join(temp.dir, "uploads", name)), path.join(temp.dir, DATA)];
      const target = await temp.workspace.forRequest(makeContext({ root: temp.dir }).request).resolve(".");
      const matches = await searchWithRipgrep({
        pattern: "needle",
        target,
        glob: "**",
        limit: 100,
        maxFileBytes: 1_000_000,
        // No post-filter here: what is left out, rg left out.
        hidden: () => false,
        hiddenPaths: hidden,
        signal: new AbortController().signal,
      });
      expect(matches.map((match) => path.relative(temp.dir, match.file)).sort()).toEqual([
        `sub/${DATA}/f.txt`,
        "sub/uploads/we ird*[x]{y}/f.txt",
        "uploads/kept-too.txt",
        "uploads/kept/f.txt",
      ]);
    },
  );

  it.skipIf(!hasRipgrep)("with real rg, another conversation's upload is not returned", async () => {
    await lay([`${uploadFolderOf(ANA)}/payslip.txt`, `${uploadFolderOf(BOB)}/mine.txt`]);
    const tool = createSearchFilesTool({ workspace: temp.workspace });
    const result = await call(
      tool,
      { pattern: "needle", glob: "**" },
      makeContext({ root: temp.dir, metadata: { target: BOB } }),
    );
    expect(result).toEqual({ ok: true, output: `${uploadFolderOf(BOB)}/mine.txt:1: needle` });
  });

  it("leaves out what lies outside or is the searched folder itself", () => {
    expect(exclusionGlobs(["/w/a", "/w", "/elsewhere/b", "/w/..x/c"], "/w")).toEqual([
      "--glob",
      "!/a",
      "--glob",
      "!/\\.\\.x/c",
    ]);
  });
});
