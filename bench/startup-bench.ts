/**
 * Start-up benchmark (issues 17, 18): how long `coworker --version` takes from the built CLI (no
 * compile on start); a real `node dist/cli.js start` process spawned against the fake Slack, from
 * spawn to its Socket Mode connection (goal ≤ 1.5 s), its idle RSS once connected (goal ≤ 100 MB)
 * and the packages that start loaded, with `node -e 0` measured in the same run as the floor; how
 * long start-up takes in-process to reach "ready" on the console alone and with a Telegram API that
 * refuses connections (it must not wait for Telegram), how soon the first warning about Telegram
 * appears, and how long one SIGINT takes to end the app. Writes bench/results/startup.json and .md.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import { EventEmitter } from "node:events";
import { createAssembly } from "../src/app/assembly.js";
import { startApp } from "../src/app/start-app.js";
import { loadConfig } from "../src/config/load-config.js";
import { createLogger } from "../src/logging/logger.js";
import { type FakeSlack, startFakeSlack } from "../test/fakes/fake-slack/index.js";
import { hostLine, round1, writeResults } from "./support/report.js";
import { REPO_ROOT } from "../test/support/repo-root.js";

const RUNS = 5;
const CLI = path.join(REPO_ROOT, "dist", "cli.js");
const LOADED_PACKAGES_HOOK = path.join(REPO_ROOT, "bench", "support", "loaded-packages.mjs");
const CONNECT_GOAL_MS = 1_500;
const IDLE_RSS_GOAL_MB = 100;
/** When the started process's RSS is read: soon after it connected, and once V8 has trimmed an idle heap. */
const SOON_AFTER_MS = 2_000;
const IDLE_AFTER_MS = 15_000;
const SPAWN_RUNS = 3;

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

/** The resident set of a running process, from /proc (Linux), in MB. */
async function rssMbOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  return round1(kb / 1_024);
}

/** `node -e 0`: spawn to exit, and the RSS a bare Node process has once it runs (the floors). */
async function nodeFloor(): Promise<{ exitMs: number; rssMb: number }> {
  const started = performance.now();
  await new Promise<void>((resolve, reject) =>
    execFile(process.execPath, ["-e", "0"], (error) => (error ? reject(error) : resolve())),
  );
  const exitMs = performance.now() - started;
  const rss = await new Promise<string>((resolve, reject) =>
    execFile(process.execPath, ["-e", "process.stdout.write(String(process.memoryUsage().rss))"], (e, out) =>
      e ? reject(e) : resolve(out),
    ),
  );
  return { exitMs, rssMb: round1(Number(rss) / 1_048_576) };
}

interface SpawnFigures {
  readonly connectMs: number;
  readonly soonRssMb: number;
  readonly idleRssMb: number;
  readonly packages: readonly string[];
}

/** Resolves once `child` has exited. */
function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
}

/**
 * Spawn `node dist/cli.js start` on a fresh project with Slack in Socket Mode on the fake: time to
 * its connection, then its RSS after idling. `listPackages` loads the package-listing hook
 * (which slows start, so those runs are not timed).
 */
async function spawnToConnected(fake: FakeSlack, listPackages: boolean): Promise<SpawnFigures> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "coworker-spawn-bench-"));
  await mkdir(path.join(dir, "workspace"));
  await writeFile(path.join(dir, "coworker.yaml"), "ops: { port: 0 }\nserver: { shutdown_grace_s: 2 }\n");
  const connectionsBefore = fake.socket.connections;
  const packages: string[] = [];
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [...(listPackages ? ["--import", LOADED_PACKAGES_HOOK] : []), CLI, "start", "-c", "coworker.yaml"],
    {
      cwd: dir,
      stdio: ["ignore", "ignore", "pipe"],
      env: {
        PATH: process.env.PATH ?? "",
        HOME: dir,
        OPENAI_BASE_URL: `http://127.0.0.1:${await closedPort()}/v1`,
        SLACK_BOT_TOKEN: fake.state.botToken,
        SLACK_APP_TOKEN: fake.state.appToken,
        SLACK_API_URL: fake.apiUrl,
      },
    },
  );
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  try {
    while (fake.socket.connections === connectionsBefore) {
      if (child.exitCode !== null) throw new Error(`coworker start exited early:\n${stderr}`);
      if (performance.now() - started > 30_000)
        throw new Error(`no Socket Mode connection in 30 s:\n${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    const connectMs = performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, SOON_AFTER_MS));
    const soonRssMb = await rssMbOf(child.pid!);
    await new Promise((resolve) => setTimeout(resolve, IDLE_AFTER_MS - SOON_AFTER_MS));
    const idleRssMb = await rssMbOf(child.pid!);
    for (const line of stderr.split("\n"))
      if (line.startsWith("loaded-package ")) packages.push(line.slice("loaded-package ".length));
    return { connectMs, soonRssMb, idleRssMb, packages: packages.sort() };
  } finally {
    child.kill("SIGTERM");
    await exited(child);
    await rm(dir, { recursive: true, force: true });
  }
}

/** Medians of SPAWN_RUNS spawns, the floor measured between them, and the packages one start loaded. */
async function spawnSeries() {
  const fake = await startFakeSlack({ pingIntervalMs: 60_000 });
  try {
    const spawns: SpawnFigures[] = [];
    const floors: Array<{ exitMs: number; rssMb: number }> = [];
    for (let i = 0; i < SPAWN_RUNS; i++) {
      floors.push(await nodeFloor());
      spawns.push(await spawnToConnected(fake, false));
    }
    const listed = await spawnToConnected(fake, true);
    return {
      connectMedianMs: round1(median(spawns.map((run) => run.connectMs))),
      connectMaxMs: round1(Math.max(...spawns.map((run) => run.connectMs))),
      soonRssMedianMb: round1(median(spawns.map((run) => run.soonRssMb))),
      idleRssMedianMb: round1(median(spawns.map((run) => run.idleRssMb))),
      nodeExitMedianMs: round1(median(floors.map((floor) => floor.exitMs))),
      nodeRssMedianMb: round1(median(floors.map((floor) => floor.rssMb))),
      packages: listed.packages,
    };
  } finally {
    await fake.close();
  }
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
  const spawned = await spawnSeries();
  const consoleOnly = await series({});
  const telegramDown = await series({
    TELEGRAM_BOT_TOKEN: "123456:AAbenchToken",
    TELEGRAM_API_ROOT: `http://127.0.0.1:${await closedPort()}`,
  });
  const results = {
    runs: RUNS,
    cliVersionMedianMs: round1(median(versions)),
    spawnToSlackConnected: {
      ...spawned,
      connectGoalMs: CONNECT_GOAL_MS,
      idleRssGoalMb: IDLE_RSS_GOAL_MB,
      meetsConnectGoal: spawned.connectMedianMs <= CONNECT_GOAL_MS,
      meetsRssGoal: spawned.idleRssMedianMb <= IDLE_RSS_GOAL_MB,
    },
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
    "## `node dist/cli.js start` → fake Slack Socket Mode connected",
    "",
    `A real process per run (median of ${SPAWN_RUNS}) on a fresh project (Slack bot + app token, default SQLite store, the`,
    `model on a closed port); its RSS is read from /proc ${SOON_AFTER_MS / 1_000} s and ${IDLE_AFTER_MS / 1_000} s after it connected (idle: by then V8 has`,
    "trimmed the heap start-up grew). `node -e 0` runs between the spawns as the floor (its RSS: a bare Node process).",
    "The executable runs with its own V8 settings (src/cli/heap-settings.ts): the young generation keeps its initial size until",
    "start-up is over, and WebAssembly (undici's HTTP parser) compiles with Liftoff only.",
    "",
    "| measure | coworker start | `node -e 0` (floor) | goal |",
    "|---|---|---|---|",
    `| spawn → connected / exited (ms, median; max) | ${spawned.connectMedianMs}; ${spawned.connectMaxMs} | ${spawned.nodeExitMedianMs} | ≤ ${CONNECT_GOAL_MS} ${results.spawnToSlackConnected.meetsConnectGoal ? "✅" : "❌"} |`,
    `| RSS ${SOON_AFTER_MS / 1_000} s after connecting (MB, median) | ${spawned.soonRssMedianMb} | ${spawned.nodeRssMedianMb} | – |`,
    `| idle RSS, ${IDLE_AFTER_MS / 1_000} s after connecting (MB, median) | ${spawned.idleRssMedianMb} | ${spawned.nodeRssMedianMb} | ≤ ${IDLE_RSS_GOAL_MB} ${results.spawnToSlackConnected.meetsRssGoal ? "✅" : "❌"} |`,
    "",
    `Packages the start imported from ESM (${spawned.packages.length}; their own CommonJS dependencies are not listed): ${spawned.packages.join(", ")}.`,
    "",
    "## In-process start-up",
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

/** `tsx bench/startup-bench.ts spawn`: only the spawn → connected series, printed as JSON. */
if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === "spawn") {
  console.log(JSON.stringify(await spawnSeries(), null, 2));
}
