/**
 * Sandbox benchmark (issue 11): the cost of the bubblewrap sandbox on run_command. Runs the real
 * tool with `true` sandboxed and unsandboxed, interleaved so both see the same machine load, and
 * reports p50 / p99 ms of each and the added p50 (target ≤ 30 ms), with the machine's load
 * average while it ran (wall-clock figures grow with it). Writes bench/results/sandbox.json and
 * bench/results/sandbox.md.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { createWorkspacePaths } from "../src/tools/files/workspace-paths.js";
import { bubblewrapBackend } from "../src/tools/shell/bubblewrap-backend.js";
import { createRunCommandTool } from "../src/tools/shell/run-command.js";
import { type SandboxBackend, unsandboxedBackend } from "../src/tools/shell/sandbox-backend.js";
import { hostLine, percentile, round1, writeResults } from "./support/report.js";
import { benchToolContext } from "./support/tool-context.js";

const RUNS = 200;
const WARMUP = 10;
const TARGET_ADDED_P50_MS = 30;

interface Figures {
  readonly p50Ms: number;
  readonly p99Ms: number;
}

function figures(samples: number[]): Figures {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50Ms: round1(percentile(sorted, 50)), p99Ms: round1(percentile(sorted, 99)) };
}

/** Run the benchmark and write its results. */
export async function run(): Promise<Record<string, unknown>> {
  const root = await mkdtemp(path.join(os.tmpdir(), "sandbox-bench-"));
  try {
    const paths = createWorkspacePaths({ root });
    const backends: Record<"sandboxed" | "unsandboxed", SandboxBackend> = {
      sandboxed: bubblewrapBackend(),
      unsandboxed: unsandboxedBackend(),
    };
    const status = await backends.sandboxed.status();
    if (status.kind !== "sandboxed") throw new Error(`bubblewrap cannot run here: ${JSON.stringify(status)}`);
    const tools = {
      sandboxed: createRunCommandTool({ paths, sandbox: backends.sandboxed }),
      unsandboxed: createRunCommandTool({ paths, sandbox: backends.unsandboxed }),
    };
    const samples = { sandboxed: [] as number[], unsandboxed: [] as number[] };
    const ctx = benchToolContext(root);
    for (let i = 0; i < WARMUP + RUNS; i += 1) {
      for (const kind of ["sandboxed", "unsandboxed"] as const) {
        const started = performance.now();
        const result = await tools[kind].execute({ command: "true" }, ctx);
        const elapsed = performance.now() - started;
        if (!result.ok) throw new Error(`${kind} run failed: ${result.output}`);
        if (i >= WARMUP) samples[kind].push(elapsed);
      }
    }
    const loadAverage = round1(os.loadavg()[0] ?? 0);
    const sandboxed = figures(samples.sandboxed);
    const unsandboxed = figures(samples.unsandboxed);
    const addedP50Ms = round1(sandboxed.p50Ms - unsandboxed.p50Ms);
    const results = {
      generatedAt: new Date().toISOString(),
      runs: RUNS,
      command: "true",
      sandboxed,
      unsandboxed,
      addedP50Ms,
      addedP99Ms: round1(sandboxed.p99Ms - unsandboxed.p99Ms),
      loadAverage1m: loadAverage,
      targetAddedP50Ms: TARGET_ADDED_P50_MS,
      meetsTarget: addedP50Ms <= TARGET_ADDED_P50_MS,
    };
    const markdown = [
      "# Sandbox benchmark",
      "",
      hostLine(results.generatedAt),
      "",
      `run_command \`true\`, ${RUNS} runs each (after ${WARMUP} warm-up runs), sandboxed and unsandboxed interleaved.`,
      "",
      "| | p50 ms | p99 ms |",
      "|---|---:|---:|",
      `| unsandboxed | ${unsandboxed.p50Ms} | ${unsandboxed.p99Ms} |`,
      `| bubblewrap | ${sandboxed.p50Ms} | ${sandboxed.p99Ms} |`,
      `| added | ${addedP50Ms} | ${results.addedP99Ms} |`,
      "",
      `1-minute load average ${loadAverage} on ${os.cpus().length} cores while it ran (wall-clock figures grow with it).`,
      "",
      `Target: ≤ ${TARGET_ADDED_P50_MS} ms added at p50 — ${results.meetsTarget ? "✅ met" : "❌ not met"}.`,
      "",
    ].join("\n");
    await writeResults("sandbox", results, markdown);
    return results;
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
