/**
 * Measuring and reporting shared by the channel benchmarks: percentiles, the peak RSS while a level
 * runs, rows with their ratio to the echo floor, the goal checks, the Markdown lines every report
 * has, and writing bench/results/<name>.json and .md.
 */
import { mkdir, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { REPO_ROOT } from "../../test/support/repo-root.js";
import type { StackRatio } from "../stack-goal.js";

/** Where every bench writes its figures: bench/results/ in the repository, from sources or compiled. */
const RESULTS_DIR = path.join(REPO_ROOT, "bench", "results");

/** How the code under measurement runs: compiled by tsc (as it ships, `npm run bench`) or through tsx. */
const CODE_FORM = import.meta.filename.endsWith(".js") ? "compiled by tsc" : "through tsx";

/** The `p`th percentile of ascending values (0 when there are none). */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/** A figure to one decimal. */
export function round1(value: number): number {
  return Number(value.toFixed(1));
}

/** Samples the process's RSS every 20 ms until `stop`, which returns the peak in MB. */
export function sampleRss(): { stop(): number } {
  let peak = process.memoryUsage().rss;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  return {
    stop: () => {
      clearInterval(sampler);
      return Math.round(peak / 1_048_576);
    },
  };
}

/** One subject's figures at one level, with its throughput as a share of the echo floor's. */
export interface Row<F> {
  readonly subject: string;
  readonly figures: F;
  readonly ratio: number;
}

/**
 * A subject's rows, level by level against the floor's figures. The ratio is cut (not rounded) to
 * two decimals, so a goal checked on it is the goal checked on the exact ratio: 0.4994 shows as
 * 0.49 and does not meet 0.5.
 */
export function rowsFor<F extends { readonly repliesPerSecond: number }>(
  subject: string,
  ours: readonly F[],
  floor: readonly F[],
): Row<F>[] {
  return ours.map((figures, index) => ({
    subject,
    figures,
    ratio: Math.floor((figures.repliesPerSecond / floor[index]!.repliesPerSecond) * 100) / 100,
  }));
}

/** Whether the channel subject reaches `goal` at every level. */
export function channelMeetsGoal(rows: readonly Row<unknown>[], goal: number): boolean {
  return rows.filter((row) => row.subject === "channel").every((row) => row.ratio >= goal);
}

/** One subject's ratios per level (`levelOf` reads the level from its figures). */
export function subjectRatios<F>(
  rows: readonly Row<F>[],
  subject: string,
  levelOf: (figures: F) => number,
): StackRatio[] {
  return rows
    .filter((row) => row.subject === subject)
    .map((row) => ({ level: levelOf(row.figures), ratio: row.ratio }));
}

/** Every row's ratio, keyed "subject@level". */
export function ratiosByRow<F>(
  rows: readonly Row<F>[],
  levelOf: (figures: F) => number,
): Record<string, number> {
  return Object.fromEntries(rows.map((row) => [`${row.subject}@${levelOf(row.figures)}`, row.ratio]));
}

/** The report's line saying when and on what it ran, with any details a bench adds. */
export function hostLine(generatedAt: string, ...details: string[]): string {
  const cpus = os.cpus();
  return [
    generatedAt,
    `Node ${process.version}`,
    `${os.platform()} ${os.arch()}`,
    `${cpus.length} × ${cpus[0]?.model ?? "cpu"}`,
    `code ${CODE_FORM}`,
    ...details,
  ].join(" · ");
}

/** The report's line on the channel goal. */
export function channelGoalLine(goal: number, meetsGoal: boolean): string {
  return `Goal: channel ratio ≥ ${goal} at every level — ${meetsGoal ? "✅ met" : "❌ not met"}.`;
}

/** Write bench/results/<name>.json (the figures) and <name>.md (the report). */
export async function writeResults(name: string, results: unknown, markdown: string): Promise<void> {
  await mkdir(RESULTS_DIR, { recursive: true });
  await writeFile(path.join(RESULTS_DIR, `${name}.json`), `${JSON.stringify(results, null, 2)}\n`);
  await writeFile(path.join(RESULTS_DIR, `${name}.md`), markdown);
}
