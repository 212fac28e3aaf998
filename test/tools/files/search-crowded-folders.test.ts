/**
 * search_files without ripgrep reads at most maxFolderEntries of a folder: reading and sorting all
 * of one a command filled with millions of files held the event loop, every chat, for seconds. A
 * fuller folder fails the search, named, rather than have its files left out unsaid.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { expect, it } from "vitest";
import { createSearchFilesTool } from "../../../src/tools/files/search-files.js";
import { call } from "../support/tool-context.js";
import { useTempWorkspace } from "../support/tool-workspace.js";

const temp = useTempWorkspace("search-crowded-");

it("fails a search without ripgrep that meets a folder over the limit, naming the folder", async () => {
  await mkdir(path.join(temp.dir, "logs", "many"), { recursive: true });
  await Promise.all(
    Array.from({ length: 11 }, (_, i) =>
      writeFile(path.join(temp.dir, "logs", "many", `f${i}.txt`), "needle\n"),
    ),
  );
  const tool = createSearchFilesTool({
    workspace: temp.workspace,
    useRipgrep: false,
    jsLimits: { maxFolderEntries: 10 },
  });
  expect(await call(tool, { pattern: "needle" })).toEqual({
    ok: false,
    output:
      "search failed: logs/many holds over 10 entries, more than a search without ripgrep reads of one folder; search narrower folders (path, glob) or use run_command (grep -r)",
  });
  const narrower = createSearchFilesTool({
    workspace: temp.workspace,
    useRipgrep: false,
    jsLimits: { maxFolderEntries: 11 },
  });
  expect((await call(narrower, { pattern: "needle", path: "logs/many" })).output.split("\n")).toHaveLength(
    11,
  );
});
