/**
 * Telegram channel benchmark (issue 6): updates → finished replies per second and reply latency
 * at 1, 50 and 200 concurrent private chats with an instant model, plus peak RSS. Each chat runs a
 * closed loop against the fake Bot API: its next message goes out when the previous reply
 * arrived. Subjects, all in this one run: a bare grammY echo bot (runner + `ctx.reply`, the
 * floor); the TelegramChannel alone on a service that answers at once; and the whole stack —
 * channel → SessionManager → TurnEngine with an instant in-process model — on the in-memory and
 * on the default SQLite store. Ratio = replies/s ÷ echo replies/s (goal ≥ 0.5 for the channel).
 * Telegram's send limits are lifted so the run measures our cost, not the throttle.
 * Writes bench/results/telegram.json and bench/results/telegram.md.
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { run as runBot } from "@grammyjs/runner";
import { Bot } from "grammy";
import pino from "pino";
import { TelegramChannel, type TelegramChannelOptions } from "../src/channels/telegram/telegram-channel.js";
import { agentEvent } from "../src/engine/events.js";
import type { ModelMessage } from "../src/engine/messages.js";
import type {
  ProviderClient,
  ProviderRequest,
  ProviderStreamEvent,
} from "../src/engine/provider/provider.js";
import type {
  ConversationService,
  InboundMessage,
  PressResult,
  ReceiveResult,
  ThreadOutputFactory,
} from "../src/sessions/contracts.js";
import { SessionManager } from "../src/sessions/session-manager.js";
import { createStore } from "../src/store/create-store.js";
import { ToolRegistry } from "../src/tools/registry.js";
import { engineFactory } from "../test/channels/telegram/stack.js";
import {
  type FakeTelegram,
  type RecordedCall,
  startFakeTelegram,
} from "../test/fakes/fake-telegram/fake-telegram.js";
import { type StackRatio, stackGoalLine, stackMeetsGoal } from "./stack-goal.js";

const LEVELS = [1, 50, 200] as const;
/** Messages per level: enough rounds for a stable rate, bounded for a quick run. */
const MESSAGES_PER_LEVEL: Record<(typeof LEVELS)[number], number> = { 1: 200, 50: 1000, 200: 1200 };
const WARMUP_MESSAGES = 600;
const GOAL_RATIO = 0.5;
const MEMORY_STACK = "stack (memory store)";
const SQLITE_STACK = "stack (SQLite store)";
const FIRST_USER = 500_000;
const RESULTS_DIR = path.resolve(import.meta.dirname, "results");
const ROOMY_LIMITS = {
  perChat: { ratePerSecond: 10_000, burst: 10_000 },
  perGroup: { ratePerSecond: 10_000, burst: 10_000 },
  global: { ratePerSecond: 100_000, burst: 100_000 },
};

/** Answers every prompt at once with one short text step. */
class InstantEchoProvider implements ProviderClient {
  async *stream(request: ProviderRequest): AsyncGenerator<ProviderStreamEvent> {
    const last = [...request.messages].reverse().find((m: ModelMessage) => m.role === "user");
    const text = `You said: ${typeof last?.content === "string" ? last.content : "…"}`;
    yield { type: "text-delta", delta: text };
    yield { type: "step-finished", text, toolCalls: [], finishReason: "stop", usage: undefined };
  }
}

/** The session layer reduced to nothing: every message is answered at once (the channel's own cost). */
class InstantService implements ConversationService {
  private factory: ThreadOutputFactory | undefined;

  registerOutput(_platform: string, factory: ThreadOutputFactory): void {
    this.factory = factory;
  }

  async receive(message: InboundMessage): Promise<ReceiveResult> {
    const renderer = this.factory!(message.target).beginTurn({
      sessionId: message.target.channel,
      turnId: message.dedupeKeys[0]!,
    });
    const text = `You said: ${message.text}`;
    void (async () => {
      await renderer.handle(agentEvent({ type: "text-delta", delta: text }));
      await renderer.handle(
        agentEvent({
          type: "turn-completed",
          status: "completed",
          iterations: 1,
          finalText: text,
          usage: undefined,
        }),
      );
      await renderer.close();
    })();
    return { status: "started" };
  }

  async press(): Promise<PressResult> {
    return { status: "invalid", message: "no buttons in the benchmark" };
  }

  async command(): Promise<string> {
    return "no commands in the benchmark";
  }
}

interface LevelFigures {
  readonly chats: number;
  readonly messages: number;
  readonly repliesPerSecond: number;
  readonly latencyMs: { readonly p50: number; readonly p95: number; readonly max: number };
  readonly peakRssMb: number;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/**
 * Drive `chats` private chats in closed loops until `total` replies arrived; a reply is the bot's
 * first successful sendMessage in that chat after the user's message.
 */
async function drive(tg: FakeTelegram, chats: number, total: number, offset: number): Promise<LevelFigures> {
  const sentAt = new Map<number, number>();
  const latencies: number[] = [];
  let sent = 0;
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 20);
  const send = (chat: number) => {
    sent++;
    sentAt.set(chat, performance.now());
    const user = { id: chat, first_name: `U${chat}` };
    tg.sendUserMessage({
      chat: { id: chat, type: "private", first_name: user.first_name },
      from: user,
      text: `m${sent}`,
    });
  };
  const started = performance.now();
  await new Promise<void>((resolve) => {
    const stop = tg.onCall((call: RecordedCall) => {
      if (call.method !== "sendMessage" || call.error) return;
      const chat = Number(call.params.chat_id);
      const at = sentAt.get(chat);
      if (at === undefined) return;
      sentAt.delete(chat);
      latencies.push(performance.now() - at);
      if (latencies.length === total) {
        stop();
        resolve();
      } else if (sent < total) send(chat);
    });
    for (let i = 0; i < chats && sent < total; i++) send(FIRST_USER + offset + i);
  });
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  const sorted = [...latencies].sort((a, b) => a - b);
  const round = (value: number) => Number(value.toFixed(1));
  return {
    chats,
    messages: total,
    repliesPerSecond: Math.round(total / seconds),
    latencyMs: {
      p50: round(percentile(sorted, 50)),
      p95: round(percentile(sorted, 95)),
      max: round(sorted.at(-1) ?? 0),
    },
    peakRssMb: Math.round(peakRss / 1_048_576),
  };
}

async function measureLevels(tg: FakeTelegram): Promise<LevelFigures[]> {
  await drive(tg, 50, WARMUP_MESSAGES, 9000);
  const figures: LevelFigures[] = [];
  for (const [index, chats] of LEVELS.entries())
    figures.push(await drive(tg, chats, MESSAGES_PER_LEVEL[chats], index * 1000));
  return figures;
}

function channelOptions(
  tg: FakeTelegram,
  service: ConversationService,
  dataDir: string,
): TelegramChannelOptions {
  return {
    botToken: tg.token,
    apiRoot: tg.apiRoot,
    allowedUsers: Array.from({ length: 10_000 }, (_, i) => String(FIRST_USER + i)),
    allowedChats: [],
    fileMaxBytes: 1_048_576,
    workspaceRoot: path.join(dataDir, "workspace"),
    service,
    logger: pino({ level: "silent" }),
    botInfo: tg.botInfo,
    sendLimits: ROOMY_LIMITS,
  };
}

/** The channel alone, on a service that answers instantly. */
async function channelOnly(tg: FakeTelegram): Promise<LevelFigures[]> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "tg-bench-"));
  const channel = new TelegramChannel(channelOptions(tg, new InstantService(), dataDir));
  await channel.start();
  try {
    return await measureLevels(tg);
  } finally {
    await channel.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/**
 * The whole stack: SessionManager on a store (`undefined` = the default SQLite file, "memory:" to
 * separate the session layer's cost from the database's), TurnEngine with an instant model.
 */
async function fullStack(tg: FakeTelegram, storeUrl: string | undefined): Promise<LevelFigures[]> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "tg-bench-"));
  const store = await createStore({ url: storeUrl, dataDir });
  const manager = new SessionManager({
    store,
    createEngine: engineFactory(new InstantEchoProvider(), new ToolRegistry()),
    defaults: { model: "instant", provider: "instant", mode: "interactive", maxSteps: 5, queueMode: "steer" },
    approvals: { approvers: [], ttlMs: 3_600_000 },
    maxSessionsInMemory: 1000,
    workspace: { root: path.join(dataDir, "workspace"), context: "" },
    auditLogPath: path.join(dataDir, "audit.jsonl"),
    logger: pino({ level: "silent" }),
  });
  const channel = new TelegramChannel(channelOptions(tg, manager, dataDir));
  await manager.start();
  await channel.start();
  try {
    return await measureLevels(tg);
  } finally {
    await channel.stop();
    await manager.drain(2000);
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function echoBot(tg: FakeTelegram): Promise<LevelFigures[]> {
  const bot = new Bot(tg.token, { client: { apiRoot: tg.apiRoot }, botInfo: tg.botInfo });
  bot.on("message:text", (ctx) => ctx.reply(ctx.message.text));
  const handle = runBot(bot);
  try {
    return await measureLevels(tg);
  } finally {
    await handle.stop();
  }
}

interface Row {
  readonly subject: string;
  readonly figures: LevelFigures;
  readonly ratio: number;
}

function rowsFor(subject: string, ours: readonly LevelFigures[], floor: readonly LevelFigures[]): Row[] {
  return ours.map((figures, index) => ({
    subject,
    figures,
    ratio: Number((figures.repliesPerSecond / floor[index]!.repliesPerSecond).toFixed(2)),
  }));
}

/** The ratios of one stack subject's rows, per level. */
function stackRatios(rows: readonly Row[], subject: string): StackRatio[] {
  return rows
    .filter((row) => row.subject === subject)
    .map((row) => ({ level: row.figures.chats, ratio: row.ratio }));
}

function markdown(generatedAt: string, rows: readonly Row[], meetsGoal: boolean): string {
  const line = (row: Row) =>
    `| ${row.subject} | ${row.figures.chats} | ${row.figures.repliesPerSecond} | ${row.ratio} | ` +
    `${row.figures.latencyMs.p50} / ${row.figures.latencyMs.p95} | ${row.figures.peakRssMb} |`;
  return [
    "# Telegram channel benchmark",
    "",
    `${generatedAt} · Node ${process.version} · ${os.platform()} ${os.arch()} · ${os.cpus()[0]?.model ?? "cpu"}`,
    "",
    "Closed-loop private chats against the fake Bot API (one message in flight per chat). Each subject runs in a",
    `child process of its own on a fresh fake; the subjects alternate ${ROUNDS} times and each keeps its best round per`,
    "level (the machine is shared, so the least disturbed round is the fairest).",
    "- **echo**: a bare grammY bot (runner + `ctx.reply`) — the floor.",
    "- **channel**: grammY runner → TelegramChannel (access, normalisation, renderer, HTML, split) on a service that answers at once.",
    "- **stack**: TelegramChannel → SessionManager → TurnEngine with an instant in-process model, on the in-memory store",
    "  and on the default SQLite store (the difference is the database's cost).",
    "",
    "Telegram's send limits (≈30 msg/s overall) are lifted for all three, so this measures our cost, not the throttle.",
    "Ratio = replies/s ÷ echo replies/s at the same concurrency.",
    "",
    "| subject | chats | replies/s | ratio | latency p50 / p95 ms | peak RSS MB |",
    "|---|---|---|---|---|---|",
    ...rows.map(line),
    "",
    `Goal: channel ratio ≥ ${GOAL_RATIO} at every level — ${meetsGoal ? "✅ met" : "❌ not met"}.`,
    "",
    stackGoalLine(
      "the stack on SQLite (inbound → finished reply)",
      stackRatios(rows, SQLITE_STACK),
      GOAL_RATIO,
    ),
    "",
    stackGoalLine("the stack on the memory store", stackRatios(rows, MEMORY_STACK), GOAL_RATIO),
    "",
  ].join("\n");
}

const SUBJECTS = {
  echo: echoBot,
  channel: channelOnly,
  "stack-memory": (tg: FakeTelegram) => fullStack(tg, "memory:"),
  "stack-sqlite": (tg: FakeTelegram) => fullStack(tg, undefined),
} as const;
type Subject = keyof typeof SUBJECTS;
const ROUNDS = 3;

/**
 * Measure one subject in a child process of its own, on a fresh fake: no subject inherits another's
 * heap, JIT state or recorded calls, and the RSS figures are that subject's alone.
 */
function inChild(subject: Subject): Promise<LevelFigures[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", fileURLToPath(import.meta.url), subject], {
      cwd: path.resolve(import.meta.dirname, ".."),
      stdio: ["ignore", "pipe", "inherit"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on("error", reject);
    child.on("exit", (code) => {
      const last = output.trim().split("\n").at(-1) ?? "";
      if (code === 0 && last.startsWith("[")) resolve(JSON.parse(last) as LevelFigures[]);
      else
        reject(new Error(`telegram bench child "${subject}" failed (exit ${code}): ${output.slice(-500)}`));
    });
  });
}

/** Per level, the round with the most replies per second (the least disturbed by other load). */
function best(rounds: readonly LevelFigures[][]): LevelFigures[] {
  return rounds[0]!.map((_, level) =>
    rounds.map((round) => round[level]!).reduce((a, b) => (b.repliesPerSecond > a.repliesPerSecond ? b : a)),
  );
}

/** Run the Telegram benchmark, write bench/results/telegram.{json,md}, and return the figures. */
export async function run(): Promise<Record<string, unknown>> {
  const rounds: Record<Subject, LevelFigures[][]> = {
    echo: [],
    channel: [],
    "stack-memory": [],
    "stack-sqlite": [],
  };
  for (let round = 0; round < ROUNDS; round++)
    for (const subject of Object.keys(rounds) as Subject[]) rounds[subject].push(await inChild(subject));
  const echo = best(rounds.echo);
  const rows = [
    ...rowsFor("echo", echo, echo),
    ...rowsFor("channel", best(rounds.channel), echo),
    ...rowsFor(MEMORY_STACK, best(rounds["stack-memory"]), echo),
    ...rowsFor(SQLITE_STACK, best(rounds["stack-sqlite"]), echo),
  ];
  const meetsGoal = rows.filter((row) => row.subject === "channel").every((row) => row.ratio >= GOAL_RATIO);
  const generatedAt = new Date().toISOString();
  const results: Record<string, unknown> = {
    generatedAt,
    node: process.version,
    cpus: os.cpus().length,
    loadAverage: os.loadavg().map((load) => Number(load.toFixed(2))),
    goalRatio: GOAL_RATIO,
    meetsGoal,
    stackMeetsGoal: stackMeetsGoal(stackRatios(rows, SQLITE_STACK), GOAL_RATIO),
    rows,
  };
  await mkdir(RESULTS_DIR, { recursive: true });
  await writeFile(path.join(RESULTS_DIR, "telegram.json"), `${JSON.stringify(results, null, 2)}\n`);
  await writeFile(path.join(RESULTS_DIR, "telegram.md"), markdown(generatedAt, rows, meetsGoal));
  return {
    meetsGoal,
    ratios: Object.fromEntries(rows.map((row) => [`${row.subject}@${row.figures.chats}`, row.ratio])),
  };
}

/** As a child process: `telegram-bench.ts <subject>` prints that subject's figures as one JSON line. */
async function childMain(subject: Subject): Promise<void> {
  const tg = await startFakeTelegram();
  try {
    process.stdout.write(`${JSON.stringify(await SUBJECTS[subject](tg))}\n`);
  } finally {
    await tg.close();
  }
}

const requested = process.argv[2];
if (process.argv[1] === fileURLToPath(import.meta.url) && requested !== undefined && requested in SUBJECTS) {
  await childMain(requested as Subject);
}
