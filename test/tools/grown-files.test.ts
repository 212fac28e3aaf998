/**
 * A workspace file the tools check against a size limit is read no further than the size they
 * checked, however it grows meanwhile (a command of the agent appending to it): write_file's
 * preview and search_files each read a file once more than its stat said, before readUpTo.
 */
import { appendFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createSearchFilesTool } from "../../src/tools/files/search-files.js";
import { createWriteFileTool } from "../../src/tools/files/write-file.js";
import type { StatHook } from "../support/stat-hook.js";
import { makeContext } from "./support/tool-context.js";
import { useTempWorkspace } from "./support/tool-workspace.js";

const statHook = vi.hoisted((): StatHook => ({ after: undefined }));

vi.mock("node:fs/promises", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:fs/promises")>();
  const { reportStats } = await import("../support/stat-hook.js");
  const open = async (...args: Parameters<typeof actual.open>) =>
    reportStats(await actual.open(...args), String(args[0]), statHook);
  return { ...actual, open, default: { ...actual, open } };
});

const temp = useTempWorkspace("grown-");
afterEach(() => {
  statHook.after = undefined;
});

/** Once `name` has been stat'ed open, append a megabyte of GROWN to it. */
function growAfterStat(name: string): void {
  statHook.after = (opened) => {
    if (!opened.endsWith(`/${name}`)) return;
    statHook.after = undefined;
    appendFileSync(path.join(temp.dir, name), "GROWN\n".repeat(200_000));
  };
}

describe("a file grown after its size check", () => {
  it("is compared by write_file's preview as it was", async () => {
    writeFileSync(path.join(temp.dir, "notes.txt"), "ORIGINAL\n");
    growAfterStat("notes.txt");
    const preview = await createWriteFileTool({ workspace: temp.workspace }).preview?.(
      { path: "notes.txt", content: "NEW\n" },
      makeContext(),
    );
    expect(statHook.after).toBeUndefined();
    expect(preview?.detail?.text).toContain("-ORIGINAL\n+NEW\n");
    expect(preview?.detail?.text).not.toContain("GROWN");
  });

  it("is searched by search_files as it was", async () => {
    writeFileSync(path.join(temp.dir, "log.txt"), "ORIGINAL\n");
    growAfterStat("log.txt");
    const search = createSearchFilesTool({ workspace: temp.workspace, useRipgrep: false });
    const result = await search.execute({ pattern: "GROWN", path: "log.txt" }, makeContext());
    expect(statHook.after).toBeUndefined();
    expect(result.output).toBe("No matches for /GROWN/ in log.txt.");
  });
});
