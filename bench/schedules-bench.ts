/**
 * Schedules benchmark (issue 14) on the embedded SQLite store: 10,000 scheduled tasks in the
 * store (created through the service, daily cron tasks in a spread of timezones, none due during
 * the run); the scheduler's idle cost — RSS delta of loading and arming them (a fresh service on
 * the same store, as after a restart) and CPU % of the process over a 30 s idle window — and the
 * lateness of due runs: 100 one-shot tasks due in the same second, measured from the due time to
 * the hand-over to the session layer (p50 / p99 / max ms). Writes bench/results/schedules.{json,md}.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import v8 from "node:v8";
import vm from "node:vm";
import { ScheduleService } from "../src/schedules/schedule-service.js";
import { DEFAULT_SCHEDULE_SETTINGS, type ScheduleSettings } from "../src/schedules/schedule-settings.js";
import type { Caller, ThreadTarget } from "../src/core/thread-target.js";
import type { WakeTurn } from "../src/sessions/wake-turns.js";
import { createStore } from "../src/store/create-store.js";
import { storeSlotBudget } from "../src/store/slot-budget.js";
import type { Store } from "../src/store/store.js";
import type { WakeableSessions } from "../src/subscriptions/session-wake.js";
import { hostLine, percentile, round1, writeResults } from "./support/report.js";

const TASKS = 10_000;
const PEOPLE = 100;
const DUE_TOGETHER = 100;
const IDLE_WINDOW_MS = 30_000;
const ZONES = ["UTC", "Europe/Berlin", "America/New_York", "Asia/Tokyo", "Australia/Sydney"];

/** No guard gets in the way of seeding: the benchmark is about the scheduler, not the limits. */
const SETTINGS: ScheduleSettings = Object.freeze({
  ...DEFAULT_SCHEDULE_SETTINGS,
  maxActivePerPerson: 1_000_000,
  maxActivePerWorkspace: 1_000_000,
});

function caller(n: number): Caller {
  const person = n % PEOPLE;
  const target: ThreadTarget = {
    platform: "slack",
    workspace: "T1",
    channel: `D${person}`,
    thread: `${n}.0`,
  };
  return { sessionId: `s${n}`, target, requester: { id: `U${person}`, name: `person ${person}` } };
}

/** Records when each run was handed over. */
class TimingSessions implements WakeableSessions {
  readonly handedAt: { turn: WakeTurn; at: number }[] = [];
  async wake(turn: WakeTurn) {
    this.handedAt.push({ turn, at: Date.now() });
    return { status: "started" as const };
  }
  isBusy(): boolean {
    return false;
  }
}

const open = (store: Store, sessions: WakeableSessions) =>
  ScheduleService.open({
    store,
    sessions,
    notify: async () => undefined,
    settings: SETTINGS,
    owner: "bench",
    wakeBudget: storeSlotBudget(store.space("budgets")),
  });

const rssMb = () => process.memoryUsage().rss / 1_048_576;
const heapMb = () => process.memoryUsage().heapUsed / 1_048_576;
/** A full collection before each memory reading, so the seeding's garbage is not counted. */
v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;
const SEED_BATCH = 64;

async function seed(store: Store): Promise<number> {
  const service = await open(store, new TimingSessions());
  const started = Date.now();
  for (let first = 0; first < TASKS; first += SEED_BATCH) {
    const batch = Array.from({ length: Math.min(SEED_BATCH, TASKS - first) }, (_, i) => first + i);
    const outcomes = await Promise.all(
      batch.map((n) =>
        service.create(caller(n), {
          prompt: `Summarise #deploys for team ${n % 37} and post it here`,
          cron: `${n % 60} ${n % 24} * * *`,
          timezone: ZONES[n % ZONES.length],
        }),
      ),
    );
    const failed = outcomes.find((outcome) => !outcome.ok);
    if (failed) throw new Error(failed.message);
  }
  await service.shutdown();
  return (Date.now() - started) / 1_000;
}

/** RSS delta of loading and arming the tasks, then CPU % over an idle window. */
async function idle(store: Store) {
  gc();
  const before = { rss: rssMb(), heap: heapMb() };
  const loadStarted = Date.now();
  const service = await open(store, new TimingSessions());
  service.start();
  const loadSeconds = (Date.now() - loadStarted) / 1_000;
  gc();
  const after = { rss: rssMb(), heap: heapMb() };
  const cpuBefore = process.cpuUsage();
  const wallBefore = performance.now();
  await new Promise((resolve) => setTimeout(resolve, IDLE_WINDOW_MS));
  const cpu = process.cpuUsage(cpuBefore);
  const wall = performance.now() - wallBefore;
  const cpuPercent = ((cpu.user + cpu.system) / 1_000 / wall) * 100;
  return {
    service,
    loadSeconds,
    rssBeforeMb: round1(before.rss),
    rssAfterMb: round1(after.rss),
    heapDeltaMb: round1(after.heap - before.heap),
    cpuPercent: Number(cpuPercent.toFixed(3)),
  };
}

/** 100 one-shot tasks due in the same second, beside the 10,000 idle ones. */
async function lateness(store: Store) {
  const sessions = new TimingSessions();
  const service = await open(store, sessions);
  service.start();
  const due = Math.ceil((Date.now() + 20_000) / 1_000) * 1_000;
  for (let n = 0; n < DUE_TOGETHER; n++) {
    const outcome = await service.create(caller(TASKS + n), {
      prompt: `due together ${n}`,
      at: new Date(due + (n % 10) * 50).toISOString(),
    });
    if (!outcome.ok) throw new Error(outcome.message);
  }
  while (sessions.handedAt.length < DUE_TOGETHER) await new Promise((resolve) => setTimeout(resolve, 50));
  await service.shutdown();
  const late = sessions.handedAt
    .map(({ turn, at }) => at - Date.parse(turn.scheduledRun?.dueAt ?? ""))
    .sort((a, b) => a - b);
  return {
    runs: late.length,
    p50Ms: round1(percentile(late, 50)),
    p99Ms: round1(percentile(late, 99)),
    maxMs: round1(late.at(-1) ?? 0),
  };
}

function markdown(results: {
  generatedAt: string;
  seedSeconds: number;
  idle: {
    loadSeconds: number;
    rssBeforeMb: number;
    rssAfterMb: number;
    heapDeltaMb: number;
    cpuPercent: number;
  };
  lateness: { runs: number; p50Ms: number; p99Ms: number; maxMs: number };
}): string {
  const { idle: i, lateness: l } = results;
  return [
    "# Schedules benchmark (embedded SQLite)",
    "",
    hostLine(results.generatedAt),
    "",
    `## ${TASKS.toLocaleString("en")} scheduled tasks in the store (daily cron tasks, ${PEOPLE} people, ${ZONES.length} timezones)`,
    "",
    `- seeding through the service (${SEED_BATCH} creates in flight): ${results.seedSeconds} s (${Math.round(TASKS / results.seedSeconds)} tasks/s)`,
    `- loading and arming them (a restart, after a full GC): ${i.loadSeconds} s; RSS ${i.rssBeforeMb} → ${i.rssAfterMb} MB (**+${round1(i.rssAfterMb - i.rssBeforeMb)} MB**), JS heap **+${i.heapDeltaMb} MB**`,
    `- idle scheduler CPU over ${IDLE_WINDOW_MS / 1_000} s: **${i.cpuPercent} %** of one core (one timer for the earliest task)`,
    "",
    `## Lateness: ${DUE_TOGETHER} one-shot tasks due in the same second (beside the ${TASKS.toLocaleString("en")})`,
    "",
    `from each due time to the hand-over to the session layer (claimed in the store, record advanced): p50 **${l.p50Ms} ms**, p99 **${l.p99Ms} ms**, max ${l.maxMs} ms (${l.runs} runs)`,
    "",
  ].join("\n");
}

/** Run the schedules benchmark, write bench/results/schedules.{json,md}, and return the figures. */
export async function run(): Promise<Record<string, unknown>> {
  const root = await mkdtemp(path.join(os.tmpdir(), "coworker-schedules-bench-"));
  const store = await createStore({ url: undefined, dataDir: root });
  try {
    const seedSeconds = round1(await seed(store));
    const measured = await idle(store);
    await measured.service.shutdown();
    const late = await lateness(store);
    const { service: _, ...idleFigures } = measured;
    const results = {
      generatedAt: new Date().toISOString(),
      node: process.version,
      backend: "sqlite (WAL, synchronous=FULL)",
      tasks: TASKS,
      seedSeconds,
      idle: {
        ...idleFigures,
        loadSeconds: round1(idleFigures.loadSeconds),
        cpuWindowS: IDLE_WINDOW_MS / 1_000,
      },
      lateness: late,
    };
    await writeResults("schedules", results, markdown(results));
    return results;
  } finally {
    await store.close();
    await rm(root, { recursive: true, force: true });
  }
}
