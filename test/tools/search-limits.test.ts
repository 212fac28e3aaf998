/**
 * search_files skips files over maxFileBytes with either engine, so no match (one JSON line from
 * ripgrep) can grow past what the service can hold.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createSearchFilesTool } from "../../src/tools/files/search-files.js";
import { call } from "./support/tool-context.js";
import { useTempWorkspace } from "./support/tool-workspace.js";

const temp = useTempWorkspace("search-limits-");

describe.each([
  { engine: "ripgrep", useRipgrep: true },
  { engine: "JS fallback", useRipgrep: false },
])("search_files ($engine) and files over maxFileBytes", ({ useRipgrep }) => {
  // rg --json streams a match as one JSON line; without a size cap a 600 MB one-line file made by
  // the shell becomes one line longer than a JS string may be, and readline throws uncaught.
  it("skips them, so no match line can be larger than the limit", async () => {
    await writeFile(path.join(temp.dir, "big.txt"), `needle ${"a".repeat(5000)}\n`);
    await writeFile(path.join(temp.dir, "small.txt"), "needle\n");
    const tool = createSearchFilesTool({ workspace: temp.workspace, useRipgrep, maxFileBytes: 1000 });
    expect(await call(tool, { pattern: "needle" })).toEqual({ ok: true, output: "small.txt:1: needle" });
  });
});
