/**
 * What an approval card of a file write reads and computes must stay bounded whatever the
 * workspace holds: the agent's shell can leave a huge file, or one of 200,000 lines that would
 * make a diff run for a minute on the event loop.
 */
import { truncate, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createEditFileTool } from "../../src/tools/files/edit-file.js";
import { createWriteFileTool } from "../../src/tools/files/write-file.js";
import { makeContext } from "./support/tool-context.js";
import { useTempWorkspace } from "./support/tool-workspace.js";

const temp = useTempWorkspace("preview-");

const distinctLines = (count: number, word: string) =>
  Array.from({ length: count }, (_, index) => `${word} ${index} ${index * 7919}`).join("\n");

describe("approval-card previews of file writes stay cheap whatever the workspace holds", () => {
  it("write_file does not read a file over the size limit (the shell may leave a 1 GB one)", async () => {
    await writeFile(path.join(temp.dir, "big.log"), "");
    await truncate(path.join(temp.dir, "big.log"), 100 * 1024 * 1024);
    const preview = await createWriteFileTool({ workspace: temp.workspace }).preview?.(
      { path: "big.log", content: "x\n" },
      makeContext(),
    );
    expect(preview).toEqual({
      summary: "Replace big\\.log (100.0 MB, too large to compare) with 1 lines of text",
      fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
  });

  it("write_file gives up a diff that would freeze the event loop (200k shell-made lines vs 500 new), and shows what it writes", async () => {
    await writeFile(path.join(temp.dir, "data.txt"), `${distinctLines(200_000, "old")}\n`);
    const content = `${distinctLines(500, "new")}\n`;
    const preview = await createWriteFileTool({ workspace: temp.workspace }).preview?.(
      { path: "data.txt", content },
      makeContext(),
    );
    expect(preview?.summary).toBe(
      "Overwrite data\\.txt with the 500 lines below (the change is too large to show as a diff)",
    );
    expect(preview?.detail).toEqual({ kind: "code", text: content });
  }, 60_000);

  it("edit_file still shows small diffs", async () => {
    await writeFile(path.join(temp.dir, "code.ts"), "let a = 1;\nlet b = 1;\n");
    const preview = await createEditFileTool({ workspace: temp.workspace }).preview?.(
      { path: "code.ts", old_text: "let b = 1;", new_text: "let b = 2;" },
      makeContext(),
    );
    expect(preview?.detail?.text).toContain("-let b = 1;\n+let b = 2;");
  });
});
