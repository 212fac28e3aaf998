/**
 * search_files checks a glob's braces once (glob-braces.ts): the JS engine's matcher checked them
 * again after the tool had, on every search it ran.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { expect, it, vi } from "vitest";
import { call } from "../support/tool-context.js";
import { useTempWorkspace } from "../support/tool-workspace.js";

const checked = vi.hoisted(() => ({ globs: [] as string[] }));
vi.mock("../../../src/tools/files/glob-braces.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../../src/tools/files/glob-braces.js")>();
  return {
    ...actual,
    braceProblem: (glob: string) => {
      checked.globs.push(glob);
      return actual.braceProblem(glob);
    },
  };
});

const { createSearchFilesTool } = await import("../../../src/tools/files/search-files.js");

const temp = useTempWorkspace("glob-braces-once-");

it("checks a glob's braces once for the JS engine", async () => {
  await writeFile(path.join(temp.dir, "a.ts"), "needle\n");
  const tool = createSearchFilesTool({ workspace: temp.workspace, useRipgrep: false });
  expect(await call(tool, { pattern: "needle", glob: "{a,b}.ts" })).toMatchObject({
    ok: true,
    output: expect.stringContaining("a.ts:1: needle"),
  });
  expect(checked.globs).toEqual(["{a,b}.ts"]);
});
