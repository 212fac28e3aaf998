/**
 * search_files' glob: matched in linear time by the JS engine (picomatch's backtracking RegExp held
 * the event loop for seconds to minutes on one file name for `*?*?…Q`), capped in size for both
 * engines, and read the same way by both (ripgrep's gitignore-style meaning).
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { braceProblem } from "../../../src/tools/files/glob-braces.js";
import { createSearchFilesTool } from "../../../src/tools/files/search-files.js";
import { globMatcher } from "../../../src/tools/files/search-glob.js";
import { call } from "../support/tool-context.js";
import { useTempWorkspace } from "../support/tool-workspace.js";

const temp = useTempWorkspace("search-glob-");

const FILES = [
  "a.ts",
  ".g.ts",
  ".hid/f.ts",
  "a{b}.txt",
  "docs/d.md",
  "src/b.ts",
  "src/e.md",
  "src/[x].ts",
  "src/sub/c.ts",
  "src/sub/docs",
];

/** What ripgrep 13 searched for each glob over FILES (run by hand: rg --hidden -l --glob …). */
const RIPGREP_SAYS: Record<string, readonly string[]> = {
  "*.ts": [".g.ts", ".hid/f.ts", "a.ts", "src/[x].ts", "src/b.ts", "src/sub/c.ts"],
  "src/*.ts": ["src/[x].ts", "src/b.ts"],
  "src/**/*.ts": ["src/[x].ts", "src/b.ts", "src/sub/c.ts"],
  "/src/*.ts": ["src/[x].ts", "src/b.ts"],
  "**/*.md": ["docs/d.md", "src/e.md"],
  "src/**": ["src/[x].ts", "src/b.ts", "src/e.md", "src/sub/c.ts", "src/sub/docs"],
  "**": FILES,
  "!*.ts": ["a{b}.txt", "docs/d.md", "src/e.md", "src/sub/docs"],
  "!src/**": [".g.ts", ".hid/f.ts", "a.ts", "a{b}.txt", "docs/d.md"],
  docs: ["src/sub/docs"],
  "src/": [],
  "?.ts": [".hid/f.ts", "a.ts", "src/b.ts", "src/sub/c.ts"],
  "[ab].ts": ["a.ts", "src/b.ts"],
  "[!a].ts": [".hid/f.ts", "src/b.ts", "src/sub/c.ts"],
  "[^a].ts": [".hid/f.ts", "src/b.ts", "src/sub/c.ts"],
  "[]a].ts": ["a.ts"],
  "{a,b}.ts": ["a.ts", "src/b.ts"],
  "src/{b,sub/c}.ts": ["src/b.ts", "src/sub/c.ts"],
  "{src/sub,docs}/*": ["docs/d.md", "src/sub/c.ts", "src/sub/docs"],
  "{src/*,a}.ts": ["a.ts", "src/[x].ts", "src/b.ts"],
  "**/{a,b}.ts": ["a.ts", "src/b.ts"],
  "{src,docs}/**": ["docs/d.md", "src/[x].ts", "src/b.ts", "src/e.md", "src/sub/c.ts", "src/sub/docs"],
  "{a}.ts": ["a.ts"],
  "\\[x\\].ts": ["src/[x].ts"],
  "[[]x].ts": ["src/[x].ts"],
  "a[{]b[}].txt": ["a{b}.txt"],
  "a\\{b\\}.txt": ["a{b}.txt"],
  "a{b}.txt": [],
  "a**.ts": ["a.ts"],
  "src/***": ["src/[x].ts", "src/b.ts", "src/e.md"],
  "sub/*.ts": [],
  "**/sub/*.ts": ["src/sub/c.ts"],
  "/**/c.ts": ["src/sub/c.ts"],
  "*/*.ts": [".hid/f.ts", "src/[x].ts", "src/b.ts"],
  ".*": [".g.ts"],
  "*.TS": [],
  "src?b.ts": [],
  "src/**/docs": ["src/sub/docs"],
  "src/sub/**/*": ["src/sub/c.ts", "src/sub/docs"],
};

describe.each([
  { engine: "ripgrep", useRipgrep: true },
  { engine: "JS fallback", useRipgrep: false },
])("search_files ($engine) globs", ({ useRipgrep }) => {
  it("mean what they mean to ripgrep", async () => {
    for (const file of FILES) {
      await mkdir(path.dirname(path.join(temp.dir, file)), { recursive: true });
      await writeFile(path.join(temp.dir, file), "needle\n");
    }
    const tool = createSearchFilesTool({ workspace: temp.workspace, useRipgrep });
    const searched: Record<string, string[]> = {};
    for (const glob of Object.keys(RIPGREP_SAYS)) {
      const { output } = await call(tool, { pattern: "needle", glob });
      searched[glob] = output.startsWith("No matches")
        ? []
        : output
            .split("\n")
            .map((line) => line.replace(/:1: needle$/, ""))
            .sort();
    }
    const expected = Object.fromEntries(
      Object.entries(RIPGREP_SAYS).map(([glob, files]) => [glob, [...files].sort()]),
    );
    expect(searched).toEqual(expected);
  });

  it("refuses what ripgrep refuses, with a reason", async () => {
    await writeFile(path.join(temp.dir, "a.ts"), "needle\n");
    const tool = createSearchFilesTool({ workspace: temp.workspace, useRipgrep });
    for (const glob of ["[", "[!]", "{a,b", "a\\", "[b-a].ts"]) {
      const result = await call(tool, { pattern: "needle", glob });
      expect(result.ok, glob).toBe(false);
      expect(result.output, glob).toMatch(/^search failed: .*(unclosed|\\|range)/);
    }
  });

  // ripgrep 13 reads a `**` in braces by globset's rules, and drops an empty alternative (a{,b}.ts
  // missed a.ts); the JS engine read both otherwise, so the two listed different files.
  it("refuses `**`, empty alternatives and braces inside braces, saying why", async () => {
    await writeFile(path.join(temp.dir, "a.ts"), "needle\n");
    const tool = createSearchFilesTool({ workspace: temp.workspace, useRipgrep });
    const refused = ["{a,**}/c.ts", "a{**/,}c.ts", "x{/**,}/y.ts", "src/{**/c,b}.ts", "{a,b/***}"];
    for (const glob of refused) {
      const result = await call(tool, { pattern: "needle", glob });
      expect(result, glob).toMatchObject({
        ok: false,
        output: expect.stringMatching(/^search failed: a \*\* inside/),
      });
    }
    for (const glob of ["*{/,}c.ts", "a{,b}.ts", "{,src/}b.ts", "{a,,b}.ts", "a{b,}.ts", "!{a,}.ts"]) {
      const result = await call(tool, { pattern: "needle", glob });
      expect(result, glob).toMatchObject({
        ok: false,
        output: expect.stringMatching(/^search failed: an empty alternative inside/),
      });
    }
    // ripgrep refuses braces in braces ("nested alternate groups are not allowed"); the JS
    // engine searched them, so the two answered differently.
    for (const glob of ["{a,{b,c}}.ts", "{{a}}.ts", "src/{b,sub/{c,d}}.ts", "{a,[x]{b,c}}", "{a{b"]) {
      const result = await call(tool, { pattern: "needle", glob });
      expect(result, glob).toMatchObject({
        ok: false,
        output: expect.stringMatching(/^search failed: a \{…\} inside/),
      });
    }
    for (const glob of [
      "a[{],[}].ts",
      "a\\{,\\}.ts",
      "**,*.ts",
      "{[,]a,b}.ts",
      "{a,b}{c,d}.ts",
      "{a,[{]b}.ts",
      "{a,\\{b}.ts",
    ]) {
      expect((await call(tool, { pattern: "needle", glob })).output, glob).not.toMatch(/^search failed/);
    }
  });

  it("are capped in length and wildcards", async () => {
    const tool = createSearchFilesTool({ workspace: temp.workspace, useRipgrep });
    await expect(call(tool, { pattern: "x", glob: `${"*?".repeat(11)}Q` })).rejects.toThrow(
      /at most 16 wildcards/,
    );
    await expect(call(tool, { pattern: "x", glob: "a".repeat(201) })).rejects.toThrow(
      /at most 200 characters/,
    );
  });
});

describe("the JS engine's glob matching", () => {
  // Each of these took the old matcher (a backtracking RegExp) minutes or more per file name.
  it("takes linear time with the most wildcards the tool accepts, on a long file name", async () => {
    const name = "conversation-workspace.test.ts".padEnd(250, "x");
    await writeFile(path.join(temp.dir, name), "x\n");
    const tool = createSearchFilesTool({ workspace: temp.workspace, useRipgrep: false });
    const glob = `${"*?".repeat(8)}Q`;
    expect(await call(tool, { pattern: "x", glob })).toEqual({
      ok: true,
      output: "No matches for /x/ in ..",
    });
  });

  it("takes linear time whatever the number of wildcards", () => {
    const matches = globMatcher(`${"*?".repeat(200)}Q`);
    expect(matches(`${"dir/".repeat(500)}${"x".repeat(4000)}`)).toBe(false);
    expect(matches(`${"x".repeat(4000)}Q`)).toBe(true);
    expect(globMatcher(`${"*a".repeat(100)}b`)(`${"a".repeat(5000)}c`)).toBe(false);
  });

  it("refuses `**`, empty alternatives and braces inside braces by braceProblem", () => {
    expect(braceProblem("{a,**}/c.ts")).toMatch(/a \*\* inside/);
    expect(braceProblem("a{,b}.ts")).toMatch(/an empty alternative inside/);
    expect(braceProblem("{a,{b,c}}.ts")).toMatch(/a \{…\} inside/);
    expect(braceProblem("{a,b}/**")).toBeUndefined();
    expect(globMatcher("{a,b}/**")("a/x/y.ts")).toBe(true);
  });

  it("treats emoji and other astral characters as one character", () => {
    expect(globMatcher("?.txt")("😀.txt")).toBe(true);
    expect(globMatcher("[😀-😂].txt")("😁.txt")).toBe(true);
    expect(globMatcher("a*")("dir😀/ab")).toBe(true);
  });
});
