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
import { makeContext } from "./support/tool-context.js";
import { useTempWorkspace } from "./support/tool-workspace.js";

/** Called with the opened path right after each open file's stat. */
const statHook = vi.hoisted(() => ({ after: undefined as ((opened: string) => void) | undefined }));

vi.mock("node:fs/promises", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:fs/promises")>();
  const open = async (...args: Parameters<typeof actual.open>) => {
    const handle = await actual.open(...args);
    const stat = handle.stat.bind(handle);
    handle.stat = (async (...options: Parameters<typeof stat>) => {
      const stats = await stat(...options);
      statHook.after?.(String(args[0]));
      return stats;
    }) as typeof handle.stat;
    return handle;
  };
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
