/**
 * Start-up benchmark (issue 18): how long `coworker --version` takes from the built CLI (no
 * compile on start), how long start-up takes to reach "ready" on the console alone and with a
 * Telegram API that refuses connections (it must not wait for Telegram), how soon the first
 * warning about Telegram appears, and how long one SIGINT takes to end the app. Writes
 * bench/results/startup.json and bench/results/startup.md.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { PassThrough } from "node:stream";
import { EventEmitter } from "node:events";
import { createAssembly } from "../src/app/assembly.js";
import { startApp } from "../src/app/start-app.js";
import { loadConfig } from "../src/config/load-config.js";
import { createLogger } from "../src/logging/logger.js";
import { hostLine, round1, writeResults } from "./support/report.js";

const RUNS = 5;
const CLI = path.resolve(import.meta.dirname, "..", "dist", "cli.js");

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function cliVersionMs(): Promise<number> {
  const started = performance.now();
  await new Promise<void>((resolve, reject) =>
    execFile(process.execPath, [CLI, "--version"], (error) => (error ? reject(error) : resolve())),
  );
  return performance.now() - started;
}

interface StartFigures {
  readonly readyMs: number;
  readonly firstWarningMs: number | undefined;
  readonly sigintToExitMs: number;
}

/** One start-up to ready and one SIGINT, on a fresh project; `env` adds platform settings. */
async function startOnce(env: Record<string, string>): Promise<StartFigures> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "coworker-startup-bench-"));
  await mkdir(path.join(dir, "workspace"));
  await writeFile(
    path.join(dir, "coworker.yaml"),
    "ops: { port: 0 }\nserver: { shutdown_grace_s: 2 }\nconsole: { enabled: true }\n",
  );
  const loaded = loadConfig({
    env: { OPENAI_BASE_URL: `http://127.0.0.1:${await closedPort()}/v1`, ...env },
    cwd: dir,
    argv: ["-c", "coworker.yaml"],
  });
  if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
  const io = { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough() };
  io.stdout.resume();
  const signals = new EventEmitter();
  const started = performance.now();
  let firstWarningMs: number | undefined;
  io.stderr.on("data", (chunk: Buffer) => {
    if (firstWarningMs === undefined && chunk.toString().startsWith("! Telegram"))
      firstWarningMs = performance.now() - started;
  });
  const app = await startApp(loaded.config, createLogger({ level: "silent" }), {
    assembly: createAssembly(),
    io,
    version: "bench",
    configSource: undefined,
    forceExit: () => undefined,
    signals,
  });
  const readyMs = performance.now() - started;
  if (env.TELEGRAM_BOT_TOKEN !== undefined)
    while (firstWarningMs === undefined) await new Promise((resolve) => setTimeout(resolve, 5));
  const stopAt = performance.now();
  signals.emit("SIGINT");
  await app.stopped;
  const sigintToExitMs = performance.now() - stopAt;
  await rm(dir, { recursive: true, force: true });
  return { readyMs, firstWarningMs, sigintToExitMs };
}

async function series(env: Record<string, string>) {
  const runs: StartFigures[] = [];
  for (let i = 0; i < RUNS; i++) runs.push(await startOnce(env));
  const warnings = runs.map((run) => run.firstWarningMs).filter((ms) => ms !== undefined);
  return {
    readyMedianMs: round1(median(runs.map((run) => run.readyMs))),
    firstWarningMedianMs: warnings.length > 0 ? round1(median(warnings)) : null,
    sigintToExitMedianMs: round1(median(runs.map((run) => run.sigintToExitMs))),
  };
}

/** Run the benchmark and write its results. */
export async function run(): Promise<Record<string, unknown>> {
  if (!existsSync(CLI))
    throw new Error("dist/cli.js is missing: run `npm run build` (npm install does) first");
  const versions: number[] = [];
  for (let i = 0; i < RUNS; i++) versions.push(await cliVersionMs());
  const consoleOnly = await series({});
  const telegramDown = await series({
    TELEGRAM_BOT_TOKEN: "123456:AAbenchToken",
    TELEGRAM_API_ROOT: `http://127.0.0.1:${await closedPort()}`,
  });
  const results = {
    runs: RUNS,
    cliVersionMedianMs: round1(median(versions)),
    consoleOnly,
    telegramRefusingConnections: telegramDown,
    machine: { cpus: os.cpus().length, node: process.version },
  };
  const md = [
    "# Start-up benchmark",
    "",
    hostLine(new Date().toISOString()),
    "",
    `Median of ${RUNS} runs each, ${results.machine.cpus} CPUs (shared), Node ${results.machine.node}.`,
    "",
    "| measure | console only | Telegram refusing connections |",
    "|---|---|---|",
    `| start-up to ready (ms) | ${consoleOnly.readyMedianMs} | ${telegramDown.readyMedianMs} |`,
    `| first Telegram warning (ms from start) | – | ${telegramDown.firstWarningMedianMs ?? "none"} |`,
    `| one SIGINT to exit (ms) | ${consoleOnly.sigintToExitMedianMs} | ${telegramDown.sigintToExitMedianMs} |`,
    "",
    `\`node dist/cli.js --version\` (no compile on start): ${results.cliVersionMedianMs} ms median.`,
    "",
  ].join("\n");
  await writeResults("startup", results, md);
  return results;
}
