/**
 * list_files reads at most maxFolderEntries of a folder: reading and sorting all of one a command
 * filled with 300,000 files held the event loop, every chat of the service, for over a second.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { expect, it } from "vitest";
import { createListFilesTool } from "../../../src/tools/files/list-files.js";
import { call } from "../support/tool-context.js";
import { useTempWorkspace } from "../support/tool-workspace.js";

const temp = useTempWorkspace("list-crowded-");

it("reads a crowded folder in part, and says so, naming it", async () => {
  await mkdir(path.join(temp.dir, "many"));
  await Promise.all(
    Array.from({ length: 30 }, (_, i) => writeFile(path.join(temp.dir, "many", `f${i}.txt`), "")),
  );
  await writeFile(path.join(temp.dir, "top.txt"), "");
  const tool = createListFilesTool({ workspace: temp.workspace, maxFolderEntries: 10 });
  const result = await call(tool, {});
  expect(result.ok).toBe(true);
  const lines = result.output.split("\n");
  expect(lines.slice(0, 3)).toEqual(["workspace root:", "many/", expect.stringMatching(/^many\/f\d+\.txt$/)]);
  expect(lines.filter((line) => line.startsWith("many/f"))).toHaveLength(10);
  expect(lines).toContain("top.txt");
  expect(lines.at(-1)).toBe(
    "… many/: over 10 entries, so only 10 of them (the first the file system gave, not by name) were read; use run_command (ls | head, find) to look further.",
  );
  const alone = await call(tool, { path: "many" });
  expect(alone.output.split("\n").at(-1)).toMatch(/^… this folder: over 10 entries/);
});
