/**
 * The JS engine of search_files runs a pattern on the event loop that serves every chat. RE2JS
 * is linear in the text, but its work per character grows with the pattern's compiled size, and
 * a short pattern compiles large: ten alternatives of `[\p{L}\p{N}]{1000}[^a]` took 14 s on one
 * 10,000-character line, in a single call the time limit cannot interrupt. So a line's work is
 * bounded: the line length seen shrinks as the pattern grows, and a pattern too large to see a
 * useful part of a line is refused; so is a pattern so long that compiling it takes seconds.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createSearchFilesTool } from "../../../src/tools/files/search-files.js";
import { call } from "../support/tool-context.js";
import { useTempWorkspace } from "../support/tool-workspace.js";

const temp = useTempWorkspace("search-pattern-work-");

/** `count` alternatives, each a run of about 1,000 letters or digits that never matches "aaa…". */
const blownUp = (count: number) =>
  Array.from({ length: count }, (_, i) => `[\\p{L}\\p{N}]{${1000 - i}}[^a]`).join("|");

describe("search_files' JS engine and patterns that compile large", () => {
  it("gets through a long line in bounded time", async () => {
    await writeFile(path.join(temp.dir, "minified.js"), `${"a".repeat(10_000)}\n`);
    const tool = createSearchFilesTool({ workspace: temp.workspace, useRipgrep: false });
    for (const pattern of [blownUp(1), blownUp(2), blownUp(10)]) {
      const started = performance.now();
      const result = await call(tool, { pattern, path: "minified.js" });
      expect(performance.now() - started).toBeLessThan(1500);
      expect(result.output).toMatch(/^No matches|too large/);
    }
  }, 120_000);

  it("refuses a pattern so long that compiling it would hold the event loop", () => {
    const tool = createSearchFilesTool({ workspace: temp.workspace, useRipgrep: false });
    expect(tool.inputSchema.safeParse({ pattern: blownUp(2000) }).success).toBe(false);
    expect(tool.inputSchema.safeParse({ pattern: "x".repeat(1000) }).success).toBe(true);
  });

  it("still sees the whole line for ordinary patterns", async () => {
    await writeFile(path.join(temp.dir, "long.txt"), `${"a".repeat(9_980)} needle_42 \n`);
    const tool = createSearchFilesTool({ workspace: temp.workspace, useRipgrep: false });
    for (const pattern of [
      "needle_\\d+",
      "(?i)(?:createWorkspacePaths|conversationPaths|NEEDLE_42)\\s",
      "\\b\\w{9}\\b",
    ])
      expect((await call(tool, { pattern, path: "long.txt" })).output).toMatch(/^long\.txt:1: a{30}/);
  });
});
