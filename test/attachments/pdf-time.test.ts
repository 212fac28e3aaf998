/**
 * A PDF's time: a document past its time budget (checked between pages) yields the pages read so
 * far, "the first N of M pages", instead of failing whole; and the extract says how far it got.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { extractPdfText } from "../../src/attachments/pdf-text.js";
import { createWorkspacePaths } from "../../src/tools/files/workspace-paths.js";
import { tinyPdf } from "../support/tiny-pdf.js";

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "pdf-time-"));
});
afterEach(() => rm(root, { recursive: true, force: true }));

describe("PDF reader time budget", () => {
  it("returns the pages read when the budget ran out, with the document's page count", async () => {
    await writeFile(
      join(root, "three.pdf"),
      tinyPdf([
        { kind: "text", lines: ["page one"] },
        { kind: "text", lines: ["page two"] },
        { kind: "text", lines: ["page three"] },
      ]),
    );
    // A budget of nothing: spent by the first page, so the read stops after it.
    const pdf = await extractPdfText(join(root, "three.pdf"), "three.pdf", createWorkspacePaths({ root }), {
      maxPages: 50,
      budgetMs: 0,
    });
    expect({ totalPages: pdf.totalPages, pages: pdf.pages.map((p) => p.trim()) }).toEqual({
      totalPages: 3,
      pages: ["page one"],
    });
    expect(await readFile(join(root, "three.pdf.txt"), "utf8")).toMatch(
      /^# PDF text: 1 of 3 pages · sha256 /,
    );
  });
});
