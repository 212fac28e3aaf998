/**
 * Store benchmark (issue 3): per-append cost on sessions holding 10, 1,000 and 10,000 messages
 * (must stay flat: 10,000 vs 10 ≤ 2×), loading (opening) a 1,000-message session, and 10,000 idle sessions
 * persisted (process RSS and file size) — all on the embedded SQLite store. Writes
 * bench/results/store.json and bench/results/store.md.
 */
import { mkdtemp, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import type { ConversationMessage } from "../src/core/messages.js";
import { SQLITE_DURABILITY } from "../src/store/backends/sqlite.js";
import { createStore } from "../src/store/create-store.js";
import { DEFAULT_HISTORY_PAGE_SIZE, HistoryLog } from "../src/store/history-log.js";
import { hostLine, writeResults } from "./support/report.js";

const SESSION_SIZES = [10, 1_000, 10_000] as const;
const MEASURED_APPENDS = 300;
const WARMUP_APPENDS = 20;
const LOAD_SESSION_SIZE = 1_000;
const LOAD_RUNS = 20;
const IDLE_SESSIONS = 10_000;
const IDLE_MESSAGES_PER_SESSION = 3;
const FLAT_APPEND_LIMIT = 2;

/** A realistic mix: user asks, assistant calls a tool, tool answers, assistant replies. */
function message(n: number): ConversationMessage {
  const at = new Date(1_700_000_000_000 + n * 1_000).toISOString();
  switch (n % 4) {
    case 0:
      return { role: "user", content: `Question ${n}: ${"please look into this. ".repeat(8)}`, meta: { at } };
    case 1:
      return {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: `call_${n}`,
            type: "function",
            function: { name: "shell", arguments: `{"command":"ls -la src/${n}"}` },
          },
        ],
        meta: { at, usage: { inputTokens: 900 + n, outputTokens: 40, totalTokens: 940 + n } },
      };
    case 2:
      return { role: "tool", tool_call_id: `call_${n - 1}`, content: `file-${n}.ts\n`.repeat(20) };
    default:
      return {
        role: "assistant",
        content: `Answer ${n}: ${"here is what I found. ".repeat(12)}`,
        meta: { at },
      };
  }
}

function messages(from: number, count: number): ConversationMessage[] {
  return Array.from({ length: count }, (_, i) => message(from + i));
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 0 ? (sorted[mid - 1]! + sorted[mid]!) / 2 : sorted[mid]!;
}

function mean(values: readonly number[]): number {
  return values.reduce((sum, v) => sum + v, 0) / values.length;
}

const round = (value: number, digits = 3) => Number(value.toFixed(digits));

async function fileBytes(file: string): Promise<number> {
  try {
    return (await stat(file)).size;
  } catch {
    return 0;
  }
}

/** Appends measured round-robin across the three sessions, so machine noise hits all of them alike. */
async function measureAppends(dataDir: string) {
  const store = await createStore({ dataDir });
  const log = new HistoryLog(store.space("history"));
  // Each session held open by its writer, as a live session holds its history (SessionHistory).
  const writers = new Map(SESSION_SIZES.map((size) => [size, log.openNew(`bench:append:${size}`)]));
  for (const size of SESSION_SIZES) {
    for (let from = 0; from < size; from += 1_000) {
      await writers.get(size)!.append(...messages(from, Math.min(1_000, size - from)));
    }
  }
  const samples = new Map<number, number[]>(SESSION_SIZES.map((size) => [size, []]));
  for (let i = 0; i < WARMUP_APPENDS + MEASURED_APPENDS; i += 1) {
    for (const size of SESSION_SIZES) {
      const started = performance.now();
      await writers.get(size)!.append(message(size + i));
      const elapsed = performance.now() - started;
      if (i >= WARMUP_APPENDS) samples.get(size)!.push(elapsed);
    }
  }
  await store.close();
  const perSize = Object.fromEntries(
    SESSION_SIZES.map((size) => {
      const values = samples.get(size)!;
      return [size, { meanMs: round(mean(values)), medianMs: round(median(values)) }];
    }),
  );
  const ratio = mean(samples.get(10_000)!) / mean(samples.get(10)!);
  return { perSize, ratio: round(ratio, 2), pass: ratio <= FLAT_APPEND_LIMIT };
}

async function measureLoad(dataDir: string) {
  const store = await createStore({ dataDir });
  const log = new HistoryLog(store.space("history"));
  await log.openNew("bench:load").append(...messages(0, LOAD_SESSION_SIZE));
  const times: number[] = [];
  for (let run = 0; run < LOAD_RUNS; run += 1) {
    const started = performance.now();
    const loaded = (await log.open("bench:load")).messages;
    times.push(performance.now() - started);
    if (loaded.length !== LOAD_SESSION_SIZE)
      throw new Error(`loaded ${loaded.length} of ${LOAD_SESSION_SIZE} messages`);
  }
  await store.close();
  return { messages: LOAD_SESSION_SIZE, medianMs: round(median(times)), maxMs: round(Math.max(...times)) };
}

async function measureIdleSessions(dataDir: string) {
  const rssBeforeMb = process.memoryUsage().rss / 2 ** 20;
  const store = await createStore({ dataDir });
  const log = new HistoryLog(store.space("history"));
  const started = performance.now();
  for (let s = 0; s < IDLE_SESSIONS; s += 1) {
    await log
      .openNew(`slack:T0001:C0001:${1_700_000_000 + s}.000100`)
      .append(...messages(s, IDLE_MESSAGES_PER_SESSION));
  }
  const persistSeconds = (performance.now() - started) / 1_000;
  const rssAfterMb = process.memoryUsage().rss / 2 ** 20;
  await store.close();
  const file = path.join(dataDir, "coworker.sqlite");
  const fileMb = ((await fileBytes(file)) + (await fileBytes(`${file}-wal`))) / 2 ** 20;
  return {
    sessions: IDLE_SESSIONS,
    messagesPerSession: IDLE_MESSAGES_PER_SESSION,
    persistSeconds: round(persistSeconds, 2),
    rssBeforeMb: round(rssBeforeMb, 1),
    rssAfterMb: round(rssAfterMb, 1),
    fileMb: round(fileMb, 2),
    fileBytesPerSession: Math.round((fileMb * 2 ** 20) / IDLE_SESSIONS),
  };
}

function markdown(
  results: Record<string, unknown>,
  append: Awaited<ReturnType<typeof measureAppends>>,
): string {
  const load = results.load as Awaited<ReturnType<typeof measureLoad>>;
  const idle = results.idleSessions as Awaited<ReturnType<typeof measureIdleSessions>>;
  const rows = SESSION_SIZES.map((size) => {
    const figures = append.perSize[size]!;
    return `| ${size.toLocaleString("en")} | ${figures.meanMs} | ${figures.medianMs} |`;
  });
  return [
    "# Store benchmark (embedded SQLite)",
    "",
    hostLine(
      String(results.generatedAt),
      `page size ${DEFAULT_HISTORY_PAGE_SIZE}`,
      `SQLite ${SQLITE_DURABILITY}`,
    ),
    "",
    `## Append one message (${MEASURED_APPENDS} appends per session, round-robin)`,
    "",
    "| session holds | mean ms | median ms |",
    "|---:|---:|---:|",
    ...rows,
    "",
    `Ratio 10,000 vs 10 (mean): **${append.ratio}×** (limit ${FLAT_APPEND_LIMIT}×) — ${append.pass ? "PASS" : "FAIL"}`,
    "",
    `## Load a ${load.messages.toLocaleString("en")}-message session`,
    "",
    `median ${load.medianMs} ms, max ${load.maxMs} ms over ${LOAD_RUNS} loads`,
    "",
    `## ${idle.sessions.toLocaleString("en")} idle sessions persisted (${idle.messagesPerSession} messages each)`,
    "",
    `written in ${idle.persistSeconds} s · process RSS ${idle.rssBeforeMb} MB before, ${idle.rssAfterMb} MB after · file ${idle.fileMb} MB (${idle.fileBytesPerSession} bytes per session)`,
    "",
  ].join("\n");
}

/** Run the store benchmark, write bench/results/store.{json,md}, and return the figures. */
export async function run(): Promise<Record<string, unknown>> {
  const root = await mkdtemp(path.join(os.tmpdir(), "coworker-store-bench-"));
  try {
    const append = await measureAppends(path.join(root, "append"));
    const load = await measureLoad(path.join(root, "load"));
    const idleSessions = await measureIdleSessions(path.join(root, "idle"));
    const results: Record<string, unknown> = {
      generatedAt: new Date().toISOString(),
      node: process.version,
      backend: `sqlite (${SQLITE_DURABILITY})`,
      pageSize: DEFAULT_HISTORY_PAGE_SIZE,
      append: { ...append, limit: FLAT_APPEND_LIMIT, measuredAppendsPerSession: MEASURED_APPENDS },
      load,
      idleSessions,
    };
    await writeResults("store", results, markdown(results, append));
    return results;
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
