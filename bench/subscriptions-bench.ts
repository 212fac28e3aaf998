/**
 * Subscriptions benchmark (issue 8): buffer ingest of 10,000 messages across 100 subscribed
 * channels on the embedded SQLite store — one message at a time (each observe awaited) and as
 * concurrent deliveries (group commit per channel) — with messages/s, process RSS and file size;
 * and wake-up latency: with a short debounce, the time from the debounce timer's due time to the
 * WakeSink call. Writes bench/results/subscriptions.json and bench/results/subscriptions.md.
 */
import { mkdtemp, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import type { ThreadTarget } from "../src/core/thread-target.js";
import { createStore } from "../src/store/create-store.js";
import { storeSlotBudget } from "../src/store/slot-budget.js";
import { type Clock, systemClock } from "../src/core/clock.js";
import type { ObservedMessage } from "../src/subscriptions/observed-message.js";
import type { PlatformDirectory } from "../src/subscriptions/platform-directory.js";
import { SubscriptionService } from "../src/subscriptions/subscription-service.js";
import type { WakeSink } from "../src/subscriptions/wake-sink.js";
import {
  DEFAULT_SUBSCRIPTION_SETTINGS,
  type SubscriptionSettings,
} from "../src/subscriptions/subscription-settings.js";
import { hostLine, writeResults } from "./support/report.js";

const CHANNELS = 100;
const MESSAGES = 10_000;
const CONCURRENT_WINDOW = 200;
const LATENCY_TRIALS = 60;
const SHORT_DEBOUNCE_MS = 50;

/** Every channel exists, everyone is a member, the bot reads everything. */
const directory: PlatformDirectory = {
  platform: "slack",
  workspace: "T1",
  bot: { userId: "UBOT", names: ["coworker"] },
  resolveChannel: async (ref) => ({ ok: true, channel: ref.replace(/^#/, ""), name: ref, broadcast: false }),
  canonicalChannel: async (channel) => channel,
  isMember: async () => true,
  ensureBotCanRead: async () => ({ ok: true }),
  history: async () => ({ entries: [] }),
};

const channelId = (c: number) => `C${String(c).padStart(6, "0")}`;

function observed(n: number, channel: number): ObservedMessage {
  return {
    platform: "slack",
    workspace: "T1",
    channel: channelId(channel),
    id: `${1_800_000_000 + n}.${String(channel).padStart(6, "0")}`,
    author: { id: `U${n % 37}`, name: `person ${n % 37}`, isBot: false },
    text: `Deploy ${n} of service-${channel}: ${"build step finished. ".repeat(4)}`,
    at: new Date(Date.now()).toISOString(),
    mentionsBot: false,
  };
}

async function subscribeAll(service: SubscriptionService): Promise<void> {
  for (let c = 0; c < CHANNELS; c += 1) {
    const target: ThreadTarget = { platform: "slack", workspace: "T1", channel: "CHOME", thread: `${c}.0` };
    const outcome = await service.subscribe(
      { sessionId: `slack:T1:CHOME:${c}.0`, target, requester: { id: "UALICE", name: "Alice" } },
      { channel: `#${channelId(c)}` },
    );
    if (!outcome.ok) throw new Error(`subscribe failed: ${outcome.message}`);
  }
}

async function fileMb(dataDir: string): Promise<number> {
  const file = path.join(dataDir, "coworker.sqlite");
  const size = async (f: string) => (await stat(f).catch(() => ({ size: 0 }))).size;
  return ((await size(file)) + (await size(`${file}-wal`))) / 2 ** 20;
}

const round = (value: number, digits = 1) => Number(value.toFixed(digits));

async function measureIngest(dataDir: string, concurrent: boolean) {
  const store = await createStore({ dataDir });
  let wakes = 0;
  const sink: WakeSink = {
    wake: async () => {
      wakes += 1;
    },
    isBusy: () => false,
  };
  const service = await SubscriptionService.open({
    store,
    directories: [directory],
    sink,
    notify: async () => undefined,
    wakeBudget: storeSlotBudget(store.space("budgets")),
    onError: (error, context) => {
      throw new Error(`${context}: ${String(error)}`);
    },
  });
  await subscribeAll(service);
  const rssBeforeMb = process.memoryUsage().rss / 2 ** 20;
  let buffered = 0;
  const count = (result: Awaited<ReturnType<SubscriptionService["observe"]>>) => {
    if (result.status === "buffered") buffered += 1;
  };
  const started = performance.now();
  if (concurrent) {
    for (let from = 0; from < MESSAGES; from += CONCURRENT_WINDOW) {
      const window = Array.from({ length: Math.min(CONCURRENT_WINDOW, MESSAGES - from) }, (_, i) => from + i);
      (await Promise.all(window.map((n) => service.observe(observed(n, n % CHANNELS))))).forEach(count);
    }
  } else {
    for (let n = 0; n < MESSAGES; n += 1) count(await service.observe(observed(n, n % CHANNELS)));
  }
  const seconds = (performance.now() - started) / 1_000;
  await service.settled();
  const rssAfterMb = process.memoryUsage().rss / 2 ** 20;
  await service.shutdown();
  await store.close();
  if (buffered !== MESSAGES) throw new Error(`buffered ${buffered} of ${MESSAGES} messages`);
  return {
    mode: concurrent ? `concurrent (${CONCURRENT_WINDOW} in flight)` : "sequential (each observe awaited)",
    messages: MESSAGES,
    channels: CHANNELS,
    seconds: round(seconds, 2),
    messagesPerSecond: Math.round(MESSAGES / seconds),
    wakeUpsDuringIngest: wakes,
    rssBeforeMb: round(rssBeforeMb),
    rssAfterMb: round(rssAfterMb),
    fileMb: round(await fileMb(dataDir), 2),
  };
}

/**
 * A real clock that remembers the due time of the timer that fired last. Its timers keep the
 * process alive (the system clock's are unref'd), since the benchmark waits on nothing else.
 */
function dueRecordingClock(): Clock & { lastDue: number } {
  const clock = {
    lastDue: 0,
    now: () => systemClock.now(),
    setTimer(callback: () => void, ms: number) {
      const due = performance.now() + Math.max(0, ms);
      return setTimeout(() => {
        clock.lastDue = due;
        callback();
      }, ms);
    },
    clearTimer: (handle: unknown) => clearTimeout(handle as NodeJS.Timeout),
  };
  return clock;
}

async function measureWakeLatency(dataDir: string) {
  const store = await createStore({ dataDir });
  const clock = dueRecordingClock();
  const latencies: number[] = [];
  let woke: (() => void) | undefined;
  const sink: WakeSink = {
    wake: async () => {
      latencies.push(performance.now() - clock.lastDue);
      woke?.();
    },
    isBusy: () => false,
  };
  const settings: SubscriptionSettings = {
    ...DEFAULT_SUBSCRIPTION_SETTINGS,
    debounceMs: SHORT_DEBOUNCE_MS,
    maxWaitMs: SHORT_DEBOUNCE_MS * 10,
    wakesPerHour: LATENCY_TRIALS * 2,
  };
  const service = await SubscriptionService.open({
    store,
    directories: [directory],
    sink,
    notify: async () => undefined,
    settings,
    clock,
    wakeBudget: storeSlotBudget(store.space("budgets")),
  });
  await subscribeAll(service);
  for (let trial = 0; trial < LATENCY_TRIALS; trial += 1) {
    const delivered = new Promise<void>((resolve) => {
      woke = resolve;
    });
    for (let burst = 0; burst < 3; burst += 1)
      await service.observe(observed(trial * 3 + burst, trial % CHANNELS));
    await delivered;
  }
  await service.shutdown();
  await store.close();
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q: number) => round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!, 2);
  return {
    debounceMs: SHORT_DEBOUNCE_MS,
    trials: LATENCY_TRIALS,
    messagesPerBurst: 3,
    medianMs: at(0.5),
    p95Ms: at(0.95),
    maxMs: round(sorted.at(-1)!, 2),
  };
}

function markdown(results: {
  generatedAt: string;
  ingest: Awaited<ReturnType<typeof measureIngest>>[];
  wake: Awaited<ReturnType<typeof measureWakeLatency>>;
}): string {
  const rows = results.ingest.map(
    (r) =>
      `| ${r.mode} | ${r.seconds} | **${r.messagesPerSecond.toLocaleString("en")}** | ${r.wakeUpsDuringIngest} | ${r.rssBeforeMb} → ${r.rssAfterMb} | ${r.fileMb} |`,
  );
  const { wake } = results;
  return [
    "# Subscriptions benchmark (embedded SQLite)",
    "",
    hostLine(
      results.generatedAt,
      `buffer cap ${DEFAULT_SUBSCRIPTION_SETTINGS.bufferMaxMessages} messages per channel, pages of 50`,
    ),
    "",
    `## Buffer ingest: ${MESSAGES.toLocaleString("en")} messages across ${CHANNELS} subscribed channels (trigger: every message)`,
    "",
    "| delivery | seconds | messages/s | wake-ups | RSS MB | file MB |",
    "|---|---:|---:|---:|---:|---:|",
    ...rows,
    "",
    `## Wake-up latency after the debounce (${wake.debounceMs} ms debounce, ${wake.trials} bursts of ${wake.messagesPerBurst})`,
    "",
    `time from the debounce timer's due time to the WakeSink call: median ${wake.medianMs} ms, p95 ${wake.p95Ms} ms, max ${wake.maxMs} ms`,
    "",
  ].join("\n");
}

/** Run the subscriptions benchmark, write bench/results/subscriptions.{json,md}, and return the figures. */
export async function run(): Promise<Record<string, unknown>> {
  const root = await mkdtemp(path.join(os.tmpdir(), "coworker-subs-bench-"));
  try {
    const sequential = await measureIngest(path.join(root, "sequential"), false);
    const concurrent = await measureIngest(path.join(root, "concurrent"), true);
    const wake = await measureWakeLatency(path.join(root, "wake"));
    const results = {
      generatedAt: new Date().toISOString(),
      node: process.version,
      backend: "sqlite (WAL, synchronous=FULL)",
      ingest: [sequential, concurrent],
      wake,
    };
    await writeResults("subscriptions", results, markdown(results));
    return results;
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
