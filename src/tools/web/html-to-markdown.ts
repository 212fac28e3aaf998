/**
 * HTML → readable markdown for web_fetch, with turndown: scripts, styles and other non-content
 * elements are dropped, headings are ATX, code blocks fenced; the page title is returned apart.
 * A fetched page is hostile input — nested unclosed elements make the HTML parser quadratic, so
 * a 2 MB page can take half an hour — so each conversion runs in a short-lived worker thread
 * under a time limit, never on the event loop that serves chats (and turndown never loads there),
 * in worker slots of its own (PAGE_CONVERTERS): slow PDFs never hold up a fetch.
 */
import { createRequire } from "node:module";
import { z } from "zod";
import { runWorkerJob, WorkerPool } from "../../core/worker-job.js";

/** A page reduced to markdown, with its title when it has one. */
export interface ReadablePage {
  readonly title: string | undefined;
  readonly markdown: string;
}

export interface ConversionOptions {
  /** Give up on a page whose conversion runs this long (default 10 s). */
  readonly timeoutMs?: number;
  /** Give up on a page that waits this long for a converter's slot (default 20 s). */
  readonly waitMs?: number;
}

/** The page converter's worker slots, process-wide (the PDF reader has its own). */
const PAGE_CONVERTERS = new WorkerPool();

const TURNDOWN_PATH = createRequire(import.meta.url).resolve("turndown");

/** The worker body (plain JavaScript: worker threads run outside the TypeScript toolchain). */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
try {
  const Turndown = require(workerData.turndown);
  const turndown = new Turndown({
    headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-", emDelimiter: "_",
  });
  turndown.remove(["head", "title", "script", "style", "noscript", "iframe", "svg", "canvas", "template", "object", "embed"]);
  const html = workerData.html;
  const titleHtml = /<title[^>]*>([\\s\\S]*?)<\\/title>/i.exec(html)?.[1];
  const title = titleHtml ? turndown.turndown(titleHtml).replace(/\\s+/g, " ").trim() : "";
  const markdown = turndown.turndown(html).replace(/[ \\t]+\\n/g, "\\n").replace(/\\n{3,}/g, "\\n\\n").trim();
  parentPort.postMessage({ ok: true, title, markdown });
} catch (error) {
  parentPort.postMessage({ ok: false, error: String((error && error.message) || error) });
}
`;

const pageResult = z.object({ title: z.string(), markdown: z.string() });

/**
 * How much the process may grow while a page converts: a 2 MB page (web_fetch's largest by
 * default) of ordinary markup grows it by about 190 MiB; pathological nesting by 440 MiB and more.
 */
const MEMORY_BUDGET_BYTES = 384 * 1024 * 1024;

/** Convert an HTML document or fragment to markdown. */
export async function htmlToMarkdown(html: string, options: ConversionOptions = {}): Promise<ReadablePage> {
  const page = await runWorkerJob({
    pool: PAGE_CONVERTERS,
    source: WORKER_SOURCE,
    data: { html, turndown: TURNDOWN_PATH },
    result: pageResult,
    name: "the page converter",
    timeoutMs: options.timeoutMs ?? 10_000,
    waitMs: options.waitMs ?? 20_000,
    tooLong: "converting the page took too long",
    heapMb: 512,
    memoryBudgetBytes: MEMORY_BUDGET_BYTES,
  });
  return { title: page.title || undefined, markdown: page.markdown };
}
