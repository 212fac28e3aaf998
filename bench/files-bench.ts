/**
 * File-tool safety benchmark (issue 11 §3): what the swap-resistant access costs and whether the
 * JS search keeps the event loop free. read_file through the anchored walk (O_NOFOLLOW per
 * component, identity check) against a plain realpath + readFile; write_file via temp file +
 * fsync + rename; search_files on ripgrep and on the JS engine (RE2JS) over the same tree; and
 * the longest event-loop stall while the JS engine runs `(a+)+$` over long lines. Writes
 * bench/results/files.json and bench/results/files.md.
 */
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { createReadFileTool } from "../src/tools/files/read-file.js";
import { createSearchFilesTool } from "../src/tools/files/search-files.js";
import { conversationWorkspace } from "../src/tools/files/conversation-workspace.js";
import { createWorkspacePaths } from "../src/tools/files/workspace-paths.js";
import { createWriteFileTool } from "../src/tools/files/write-file.js";
import type { AnyTool, ToolContext } from "../src/core/tool.js";
import { hostLine, percentile, round1, writeResults } from "./support/report.js";
import { benchToolContext } from "./support/tool-context.js";

const READS = 2_000;
const WRITES = 300;
const SEARCH_FILES = 500;
const SEARCH_LINES = 200;
const SEARCH_RUNS = 5;
const LONG_LINES = 100;
const LONG_LINE_CHARS = 20_000;

/** p50 / p99 in ms of `runs` sequential runs of `work`. */
async function timed(runs: number, work: (index: number) => Promise<unknown>) {
  const samples: number[] = [];
  for (let index = 0; index < runs; index += 1) {
    const started = performance.now();
    await work(index);
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  const ms = (value: number) => Number(value.toFixed(3));
  return { p50Ms: ms(percentile(samples, 50)), p99Ms: ms(percentile(samples, 99)) };
}

async function expectOk(tool: AnyTool, args: Record<string, unknown>, ctx: ToolContext) {
  const result = await tool.execute(tool.inputSchema.parse(args), ctx);
  if (!result.ok) throw new Error(`${tool.name} failed: ${result.output}`);
  return result;
}

/** Run the benchmark and write its results. */
export async function run(): Promise<Record<string, unknown>> {
  const root = await realpath(await mkdtemp(path.join(os.tmpdir(), "coworker-files-bench-")));
  try {
    const workspace = conversationWorkspace(createWorkspacePaths({ root }));
    const ctx = benchToolContext(root);
    await mkdir(path.join(root, "src/deep/er"), { recursive: true });
    const body = Array.from({ length: 200 }, (_, i) => `line ${i} of a typical source file;`).join("\n");
    await writeFile(path.join(root, "src/deep/er/file.ts"), body);

    const read = createReadFileTool({ workspace });
    const anchoredRead = await timed(READS, () => expectOk(read, { path: "src/deep/er/file.ts" }, ctx));
    const plainRead = await timed(READS, async () =>
      readFile(await realpath(path.join(root, "src/deep/er/file.ts")), "utf8"),
    );

    const write = createWriteFileTool({ workspace });
    const atomicWrite = await timed(WRITES, (i) =>
      expectOk(write, { path: "src/deep/er/out.ts", content: `${body}\n// ${i}` }, ctx),
    );
    const plainWrite = await timed(WRITES, (i) =>
      writeFile(path.join(root, "src/deep/er/plain.ts"), `${body}\n// ${i}`),
    );

    await mkdir(path.join(root, "tree"));
    for (let f = 0; f < SEARCH_FILES; f += 1) {
      const lines = Array.from({ length: SEARCH_LINES }, (_, i) =>
        i === f % SEARCH_LINES ? `const needle${f} = true;` : `filler ${i} text`,
      );
      await writeFile(path.join(root, "tree", `f${f}.ts`), lines.join("\n"));
    }
    const rg = createSearchFilesTool({ workspace, maxResults: 1_000 });
    const js = createSearchFilesTool({ workspace, maxResults: 1_000, useRipgrep: false });
    const ripgrepSearch = await timed(SEARCH_RUNS, () =>
      expectOk(rg, { pattern: "needle\\d+", path: "tree" }, ctx),
    );
    const jsSearch = await timed(SEARCH_RUNS, () =>
      expectOk(js, { pattern: "needle\\d+", path: "tree" }, ctx),
    );

    await writeFile(
      path.join(root, "long.txt"),
      Array.from({ length: LONG_LINES }, () => `${"a".repeat(LONG_LINE_CHARS - 1)}b`).join("\n"),
    );
    const lag = monitorEventLoopDelay({ resolution: 1 });
    lag.enable();
    const started = performance.now();
    await expectOk(
      createSearchFilesTool({ workspace, useRipgrep: false, jsLimits: { maxLineChars: LONG_LINE_CHARS } }),
      { pattern: "(a+)+$", path: "long.txt" },
      ctx,
    );
    const catastrophicMs = round1(performance.now() - started);
    lag.disable();
    const maxLoopStallMs = round1(lag.max / 1e6);

    const results = {
      generatedAt: new Date().toISOString(),
      node: process.version,
      readFile: { calls: READS, anchored: anchoredRead, plainRealpathReadFile: plainRead },
      writeFile: { calls: WRITES, tempFsyncRename: atomicWrite, plainWriteFile: plainWrite },
      searchFiles: {
        files: SEARCH_FILES,
        linesPerFile: SEARCH_LINES,
        runs: SEARCH_RUNS,
        ripgrep: ripgrepSearch,
        js: jsSearch,
      },
      catastrophicPattern: {
        pattern: "(a+)+$",
        lines: LONG_LINES,
        charsPerLine: LONG_LINE_CHARS,
        totalMs: catastrophicMs,
        maxEventLoopStallMs: maxLoopStallMs,
      },
    };
    const markdown = [
      "# File-tool safety benchmark",
      "",
      hostLine(results.generatedAt),
      "",
      "| operation | p50 ms | p99 ms |",
      "| --- | ---: | ---: |",
      `| read_file, anchored walk + identity check (${READS} calls) | ${anchoredRead.p50Ms} | ${anchoredRead.p99Ms} |`,
      `| baseline: realpath + readFile | ${plainRead.p50Ms} | ${plainRead.p99Ms} |`,
      `| write_file, temp + fsync + rename (${WRITES} calls) | ${atomicWrite.p50Ms} | ${atomicWrite.p99Ms} |`,
      `| baseline: plain writeFile | ${plainWrite.p50Ms} | ${plainWrite.p99Ms} |`,
      `| search_files, ripgrep (${SEARCH_FILES} files × ${SEARCH_LINES} lines) | ${ripgrepSearch.p50Ms} | ${ripgrepSearch.p99Ms} |`,
      `| search_files, JS engine (RE2JS), same tree | ${jsSearch.p50Ms} | ${jsSearch.p99Ms} |`,
      "",
      `JS engine on \`(a+)+$\` over ${LONG_LINES} lines of ${LONG_LINE_CHARS} characters: ${catastrophicMs} ms in all, longest event-loop stall ${maxLoopStallMs} ms.`,
      "",
    ].join("\n");
    await writeResults("files", results, markdown);
    return results;
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
