/**
 * search_files skips files over maxFileBytes with either engine, so no match (one JSON line from
 * ripgrep) can grow past what the service can hold.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSearchFilesTool } from "../../src/tools/files/search-files.js";
import type { ConversationWorkspace } from "../../src/tools/files/conversation-workspace.js";
import { call, tempDir } from "./support/tool-context.js";
import { toolWorkspace } from "./support/tool-workspace.js";

let ws: string;
let workspace: ConversationWorkspace;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir: ws, cleanup } = await tempDir("search-limits-"));
  workspace = toolWorkspace({ root: ws });
});
afterEach(async () => {
  await cleanup();
});

describe.each([
  { engine: "ripgrep", useRipgrep: true },
  { engine: "JS fallback", useRipgrep: false },
])("search_files ($engine) and files over maxFileBytes", ({ useRipgrep }) => {
  // rg --json streams a match as one JSON line; without a size cap a 600 MB one-line file made by
  // the shell becomes one line longer than a JS string may be, and readline throws uncaught.
  it("skips them, so no match line can be larger than the limit", async () => {
    await writeFile(path.join(ws, "big.txt"), `needle ${"a".repeat(5000)}\n`);
    await writeFile(path.join(ws, "small.txt"), "needle\n");
    const tool = createSearchFilesTool({ workspace, useRipgrep, maxFileBytes: 1000 });
    expect(await call(tool, { pattern: "needle" })).toEqual({ ok: true, output: "small.txt:1: needle" });
  });
});
