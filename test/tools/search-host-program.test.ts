/**
 * search_files starts ripgrep on the host inside the folder it searches, so a bare "rg" must never
 * be found there: with an empty or "." entry in PATH, an `rg` a command wrote into the workspace
 * would otherwise run on the host, outside the sandbox.
 */
import { chmod, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { hostProgram } from "../../src/core/host-program.js";
import { createSearchFilesTool } from "../../src/tools/files/search-files.js";
import { call } from "./support/tool-context.js";
import { useTempWorkspace } from "./support/tool-workspace.js";

const temp = useTempWorkspace("search-host-program-");
const realPath = process.env.PATH;
afterEach(() => {
  process.env.PATH = realPath;
});

/** An executable `rg` in the workspace that leaves a mark when it runs. */
async function plantRipgrep(): Promise<string> {
  const mark = path.join(temp.dir, "ran");
  const planted = path.join(temp.dir, "rg");
  await writeFile(planted, `#!/bin/sh\necho planted > ${JSON.stringify(mark)}\n`);
  await chmod(planted, 0o755);
  return mark;
}

describe("search_files and a ripgrep planted in the workspace", () => {
  for (const [first, searchPath] of [
    ["an empty entry", `:${realPath}`],
    ['"."', `.:${realPath}`],
  ] as const) {
    it(`runs the real ripgrep when PATH begins with ${first}`, async () => {
      const mark = await plantRipgrep();
      await writeFile(path.join(temp.dir, "notes.txt"), "needle\n");
      process.env.PATH = searchPath;
      const tool = createSearchFilesTool({ workspace: temp.workspace, useRipgrep: true });
      expect(await call(tool, { pattern: "needle" })).toEqual({ ok: true, output: "notes.txt:1: needle" });
      await expect(readFile(mark)).rejects.toThrow(/ENOENT/);
    });
  }
});

describe("hostProgram", () => {
  it("looks in PATH's absolute entries only, and takes a name with a slash as the service's path", async () => {
    await plantRipgrep();
    const real = await hostProgram("rg", realPath);
    expect(real).toMatch(/^\/.+\/rg$/);
    expect(await hostProgram("rg", `::.:${temp.dir}/..:relative`)).toBeUndefined();
    expect(await hostProgram("rg", `.:${realPath}`)).toBe(real);
    expect(await hostProgram("rg", temp.dir)).toBe(path.join(temp.dir, "rg"));
    expect(await hostProgram("no-such-program-anywhere", realPath)).toBeUndefined();
    expect(await hostProgram("./rg", "")).toBe(path.resolve("./rg"));
  });

  it("resolves a relative name with a slash against the service's working directory, not the child's", async () => {
    const found = await hostProgram("bin/rg", "");
    expect(found).toBe(path.join(process.cwd(), "bin", "rg"));
    expect(path.isAbsolute(found ?? "")).toBe(true);
  });
});
