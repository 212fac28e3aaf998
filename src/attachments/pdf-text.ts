/**
 * PDF text extraction with pdf.js (pdfjs-dist 4, the legacy build that runs on Node 20), off the
 * main thread: each document is parsed in a short-lived worker thread, so a large PDF never
 * blocks the event loop that serves chats. Page-capped; the extract is cached beside the file
 * (`<file>.txt`, pages separated by form feeds under a one-line header naming the PDF's SHA-256)
 * so a redelivery or the same document sent again costs a hash, not a parse. A PDF whose pages
 * carry no text (a scan) is reported as such. The worker's heap limit does not cover the buffers
 * pdf.js inflates streams into (a 2 MB PDF can inflate to gigabytes), so the parse is also
 * stopped when the process grows past a memory budget.
 *
 * A small PDF can still cost pdf.js seconds a page (pages sharing one content stream of millions
 * of operators), so a document has a time budget, checked between pages: past it, the pages read
 * so far are the extract ("the first N of M pages") and the slot is handed on. The PDF reader has
 * worker slots of its own (PDF_READERS), apart from the web page converter's; its time limit
 * counts from when the parse starts, and its wait for a slot is bounded apart.
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { z } from "zod";
import { fileSha256 } from "../core/file-sha256.js";
import { runWorkerJob, WorkerPool } from "../core/worker-job.js";
import { saveInWorkspace, withWorkspaceFile } from "../tools/files/service-file-access.js";
import type { WorkspacePaths } from "../tools/files/workspace-paths.js";

/** What a PDF yielded. */
export interface PdfText {
  readonly totalPages: number;
  /** The text of the pages read (the first `min(totalPages, maxPages)`). */
  readonly pages: readonly string[];
  /** True when the pages read carry no text at all (a scanned document). */
  readonly scanned: boolean;
  /** Workspace file holding the whole extract. */
  readonly cachePath: string;
}

export interface PdfTextOptions {
  readonly maxPages: number;
  /**
   * Read no further page once the parse has taken this long (default 20 s): the pages read by
   * then are the extract. Checked between pages, so the first page is always read.
   */
  readonly budgetMs?: number;
  /** Give up on a document whose parse runs this long (default 60 s): one page that never ends. */
  readonly timeoutMs?: number;
  /** Give up on a document that waits this long for a slot of the PDF reader (default 60 s). */
  readonly waitMs?: number;
  /** Give up when the process's resident memory grows by more than this while parsing (default 1 GiB). */
  readonly memoryBudgetBytes?: number;
}

const DEFAULT_MEMORY_BUDGET_BYTES = 1024 * 1024 * 1024;

/** The PDF reader's worker slots, process-wide (the page converter has its own). */
export const PDF_READERS = new WorkerPool();

const require = createRequire(import.meta.url);
const PDFJS_URL = pathToFileURL(require.resolve("pdfjs-dist/legacy/build/pdf.mjs")).href;
const FONTS_DIR = `${join(dirname(require.resolve("pdfjs-dist/package.json")), "standard_fonts")}/`;
const HEADER = /^# PDF text: (\d+) of (\d+) pages · sha256 ([0-9a-f]{64})\n/;

/** The worker body (plain JavaScript: worker threads run outside the TypeScript toolchain). */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { readFile } = require("node:fs/promises");
const started = Date.now();
// The page cut keeps whole characters: a cut between the two halves of a surrogate pair (most
// emoji) leaves half a character. Written out here because this source runs in a worker thread,
// outside the TypeScript build, so it cannot import core/surrogate-pairs.ts.
const cut = (text, max) => {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max) + "…";
};
(async () => {
  const pdfjs = await import(workerData.pdfjs);
  const data = new Uint8Array(await readFile(workerData.file));
  const doc = await pdfjs.getDocument({
    data, standardFontDataUrl: workerData.fonts, verbosity: 0, isEvalSupported: false, useSystemFonts: false,
  }).promise;
  const pages = [];
  for (let n = 1; n <= Math.min(doc.numPages, workerData.maxPages); n++) {
    const page = await doc.getPage(n);
    const content = await page.getTextContent();
    const text = content.items.map((item) => ("str" in item ? item.str + (item.hasEOL ? "\\n" : "") : "")).join("");
    pages.push(cut(text, workerData.pageMaxChars));
    page.cleanup();
    if (Date.now() - started >= workerData.budgetMs) break;
  }
  const totalPages = doc.numPages;
  await doc.destroy();
  parentPort.postMessage({ ok: true, totalPages, pages });
})().catch((error) => parentPort.postMessage({ ok: false, error: String((error && error.message) || error) }));
`;

/** What the worker answers for a document. */
const pdfResult = z.object({ totalPages: z.number().int().nonnegative(), pages: z.array(z.string()) });

function inWorker(file: string, options: PdfTextOptions): Promise<z.infer<typeof pdfResult>> {
  return runWorkerJob({
    pool: PDF_READERS,
    source: WORKER_SOURCE,
    data: {
      file,
      pdfjs: PDFJS_URL,
      fonts: FONTS_DIR,
      maxPages: options.maxPages,
      pageMaxChars: PAGE_MAX_CHARS,
      budgetMs: options.budgetMs ?? 20_000,
    },
    result: pdfResult,
    name: "the PDF reader",
    timeoutMs: options.timeoutMs ?? 60_000,
    waitMs: options.waitMs ?? 60_000,
    tooLong: "reading it took too long",
    heapMb: 512,
    memoryBudgetBytes: options.memoryBudgetBytes ?? DEFAULT_MEMORY_BUDGET_BYTES,
  });
}

function pdfTextOf(totalPages: number, pages: readonly string[], cachePath: string): PdfText {
  return { totalPages, pages, scanned: pages.every((page) => page.trim() === ""), cachePath };
}

/** The longest cache file read back (an extract of far more pages than any cap lets through). */
const CACHE_MAX_BYTES = 16 * 1024 * 1024;

/**
 * The most text kept of one page: a dense page of prose holds about 5,000 characters, so this cuts
 * only a page built to be huge — and keeps an extract of the default 50 pages (4 bytes a
 * character at most) under CACHE_MAX_BYTES, so what is written is read back rather than parsed again.
 */
const PAGE_MAX_CHARS = 64 * 1024;

async function cached(
  workspace: WorkspacePaths,
  digest: string,
  cachePath: string,
): Promise<PdfText | undefined> {
  try {
    const text = await withWorkspaceFile(workspace, cachePath, (path, stats) =>
      stats.size > CACHE_MAX_BYTES ? Promise.resolve("") : readFile(path, "utf8"),
    );
    const header = HEADER.exec(text);
    if (!header || header[3] !== digest) return undefined;
    const body = text.slice(header[0].length);
    const read = Number(header[1]);
    const pages = read === 0 ? [] : body.split("\f\n");
    return pages.length === read ? pdfTextOf(Number(header[2]), pages, cachePath) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The text of the PDF at `relative` in `workspace`, read from `file` (a path naming it, held open
 * by the caller: service-file-access.ts), from the cache beside it when that is current. The cache
 * is read and written as the service touches every workspace file, never through a link, and
 * through `workspace`: the view of the conversation the PDF was sent in (conversation-paths.ts),
 * so a cache path leading into another conversation's uploads is neither read nor written. Throws
 * when the file is not a readable PDF.
 */
export async function extractPdfText(
  file: string,
  relative: string,
  workspace: WorkspacePaths,
  options: PdfTextOptions,
): Promise<PdfText> {
  const cachePath = `${relative}.txt`;
  const digest = await fileSha256(file);
  const hit = await cached(workspace, digest, cachePath);
  if (hit) return hit;
  const { totalPages, pages } = await inWorker(file, options);
  const header = `# PDF text: ${pages.length} of ${totalPages} pages · sha256 ${digest}\n`;
  await saveInWorkspace(workspace, cachePath, header + pages.join("\f\n"));
  return pdfTextOf(totalPages, pages, cachePath);
}
