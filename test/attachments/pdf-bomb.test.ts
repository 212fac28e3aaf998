/**
 * A PDF whose content stream inflates to hundreds of megabytes from a file of a few hundred
 * kilobytes: pdf.js holds decoded streams in buffers outside the worker's heap limit, so the
 * reader must be stopped by a memory budget of its own.
 */
import { createWorkspacePaths } from "../../src/tools/files/workspace-paths.js";
import { once } from "node:events";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDeflate, deflateSync } from "node:zlib";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { extractPdfText } from "../../src/attachments/pdf-text.js";
import { tinyPdf } from "../support/tiny-pdf.js";

const MB = 1024 * 1024;
let root: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "pdf-bomb-"));
});
afterEach(() => rm(root, { recursive: true, force: true }));

/** `bytes` of a text operator followed by spaces, deflated a megabyte at a time. */
async function deflatedContent(bytes: number): Promise<Buffer> {
  const deflate = createDeflate({ level: 9 });
  const out: Buffer[] = [];
  deflate.on("data", (chunk: Buffer) => out.push(chunk));
  deflate.write("BT /F1 12 Tf 72 720 Td (Hello) Tj ET\n");
  const spaces = Buffer.alloc(MB, 0x20);
  for (let written = 0; written < bytes; written += MB)
    if (!deflate.write(spaces)) await once(deflate, "drain");
  deflate.end();
  await once(deflate, "end");
  return Buffer.concat(out);
}

describe("PDF reader memory budget", () => {
  it("stops a decompression bomb instead of inflating it in memory", async () => {
    const pdf = tinyPdf([{ kind: "deflated", stream: await deflatedContent(512 * MB) }]);
    expect(pdf.length).toBeLessThan(MB);
    const file = join(root, "bomb.pdf");
    await writeFile(file, pdf);
    await expect(
      extractPdfText(file, "bomb.pdf", createWorkspacePaths({ root }), {
        maxPages: 50,
        memoryBudgetBytes: 256 * MB,
      }),
    ).rejects.toThrow(/too much memory/);
  });

  it("reads an ordinary PDF within the same budget", async () => {
    const file = join(root, "small.pdf");
    await writeFile(file, tinyPdf([{ kind: "deflated", stream: await deflatedContent(MB) }]));
    const pdf = await extractPdfText(file, "small.pdf", createWorkspacePaths({ root }), {
      maxPages: 50,
      memoryBudgetBytes: 256 * MB,
    });
    expect(pdf.pages[0]).toMatch(/^Hello/);
  });

  it("keeps at most 64 Ki characters of a page, so its extract on disk stays small and is read back", async () => {
    const file = join(root, "wide.pdf");
    // 1-point text, a line a point apart: 200 lines of 600 characters all fit on the page.
    const lines = Array.from({ length: 200 }, (_, i) => `1 0 0 1 0 ${790 - i} Tm (${"A".repeat(600)}) Tj`);
    const stream = deflateSync(`BT /F1 1 Tf ${lines.join(" ")} ET`);
    await writeFile(file, tinyPdf([{ kind: "deflated", stream }]));
    const workspace = createWorkspacePaths({ root });
    const pdf = await extractPdfText(file, "wide.pdf", workspace, { maxPages: 50 });
    expect(pdf.pages[0]?.length).toBe(64 * 1024 + 1);
    expect(pdf.pages[0]?.endsWith("A…")).toBe(true);
    const { size } = await stat(join(root, "wide.pdf.txt"));
    expect(size).toBeLessThan(70 * 1024);
    // Read back from the cache: the same text.
    expect((await extractPdfText(file, "wide.pdf", workspace, { maxPages: 50 })).pages).toEqual(pdf.pages);
  });
});
