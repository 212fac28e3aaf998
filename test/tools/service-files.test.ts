/**
 * The service's own files (its data folder with every session's history and the audit log, its
 * config file) are off limits to the file tools even when they lie inside the workspace, as they
 * are hidden from commands: no read, write, search or listing reaches them, by any spelling.
 */
import { mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { createListFilesTool } from "../../src/tools/files/list-files.js";
import { createReadFileTool } from "../../src/tools/files/read-file.js";
import { createSearchFilesTool } from "../../src/tools/files/search-files.js";
import { createWriteFileTool } from "../../src/tools/files/write-file.js";
import { call } from "./support/tool-context.js";
import { useTempWorkspace } from "./support/tool-workspace.js";

// The service's folder (here the workspace's parent) holds the workspace: that entry is not applied.
const temp = useTempWorkspace("service-files-", (ws) => [
  path.join(ws, "data"),
  path.join(ws, "coworker.yaml"),
  path.dirname(ws),
]);

beforeEach(async () => {
  await mkdir(path.join(temp.dir, "data"));
  await writeFile(path.join(temp.dir, "data", "audit.jsonl"), '{"secret":"other sessions"}\n');
  await writeFile(path.join(temp.dir, "coworker.yaml"), "model:\n  api_key: secret-key\n");
  await writeFile(path.join(temp.dir, "notes.txt"), "secret is fine here\n");
});

describe("the service's own files inside the workspace", () => {
  it("are refused by read_file and write_file, however the path is spelled", async () => {
    const read = createReadFileTool({ workspace: temp.workspace });
    for (const spelling of [
      "data/audit.jsonl",
      "./data/../data/audit.jsonl",
      path.join(temp.dir, "coworker.yaml"),
    ]) {
      const result = await call(read, { path: spelling });
      expect(result.ok).toBe(false);
      expect(result.output).toContain("off limits to the file tools");
    }
    await symlink(path.join(temp.dir, "data"), path.join(temp.dir, "innocent"));
    expect((await call(read, { path: "innocent/audit.jsonl" })).ok).toBe(false);
    const written = await call(createWriteFileTool({ workspace: temp.workspace }), {
      path: "data/grants.json",
      content: "{}",
    });
    expect(written.output).toContain("off limits to the file tools");
    expect((await call(read, { path: "notes.txt" })).ok).toBe(true);
  });

  it.each([
    { engine: "ripgrep", useRipgrep: true },
    { engine: "JS fallback", useRipgrep: false },
  ])("are never searched ($engine)", async ({ useRipgrep }) => {
    const search = createSearchFilesTool({ workspace: temp.workspace, useRipgrep });
    expect(await call(search, { pattern: "secret" })).toEqual({
      ok: true,
      output: "notes.txt:1: secret is fine here",
    });
  });

  it("are not listed", async () => {
    const result = await call(createListFilesTool({ workspace: temp.workspace }), { path: ".", depth: 2 });
    expect(result).toEqual({ ok: true, output: "workspace root:\nnotes.txt" });
  });
});
