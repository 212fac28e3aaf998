/**
 * The PDF reader cuts a huge page's text between whole characters: the cut at a fixed length
 * could keep the first half of an emoji (a lone surrogate) before the "…".
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { extractPdfText } from "../../src/attachments/pdf-text.js";
import { createWorkspacePaths } from "../../src/tools/files/workspace-paths.js";
import { tinyPdf } from "../support/tiny-pdf.js";

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "pdf-page-cut-"));
});
afterEach(() => rm(root, { recursive: true, force: true }));

/** Whether `text` holds half a surrogate pair. */
const hasLoneSurrogate = (text: string): boolean =>
  /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);

describe("PDF page cut", () => {
  it("keeps whole characters when a page is cut", async () => {
    // "a" then 40,000 emoji: each emoji's halves sit at an odd and an even index, so any even
    // cut length (the reader keeps 64 Ki characters a page) falls inside one. A tiny font keeps
    // the line on the page (pdf.js leaves out text past the page's edge).
    const stream = deflateSync(`BT /F1 0.001 Tf 72 720 Td (a${"b".repeat(40_000)}) Tj ET`);
    await writeFile(join(root, "emoji.pdf"), tinyPdf([{ kind: "deflated", stream }], { 98: "u1F600" }));
    const pdf = await extractPdfText(join(root, "emoji.pdf"), "emoji.pdf", createWorkspacePaths({ root }), {
      maxPages: 1,
    });
    const page = pdf.pages[0] as string;
    expect(page.startsWith("a😀😀")).toBe(true);
    expect(page.endsWith("😀…")).toBe(true);
    expect(hasLoneSurrogate(page)).toBe(false);
  });
});
