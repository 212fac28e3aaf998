/**
 * Slack channel benchmark (issue 5): inbound events → finished replies per second and ack latency
 * p50 / p99 at 1, 50 and 200 concurrent threads, plus RSS, with the fake Slack on loopback (Web
 * API + Socket Mode) and an instant in-process model. Each "thread" is a person in their own DM
 * running a closed loop: a new top-level message (so a new thread and session) as soon as the
 * reply to the previous one is finished. Subjects, all on the same fake:
 * - echo: a bare Bolt app (Socket Mode, `say` into the thread) — the floor;
 * - channel: SlackChannel (validation, mention rules, dedupe, users, renderer with native
 *   streaming, thinking status) on a service that answers at once;
 * - full stack: SlackChannel → SessionManager (SQLite store) → TurnEngine with the instant model.
 * Ratio = replies/s ÷ echo replies/s at the same concurrency (goal for the channel ≥ 0.5). A
 * throwaway echo pass warms the process; then the subjects run in turn for several rounds and
 * each figure is the median round, so a noisy shared host does not favour one subject.
 * Writes bench/results/slack.json and bench/results/slack.md.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { App, LogLevel } from "@slack/bolt";
import { SlackChannel } from "../src/channels/slack/slack-channel.js";
import type { ConversationService } from "../src/sessions/contracts.js";
import { type FakeSlackAddress, fakeSlackChannelOptions } from "../test/channels/slack/support.js";
import { type ApiCall, type FakeSlack, startFakeSlack } from "../test/fakes/fake-slack/index.js";
import { stopStack } from "../test/support/session-stack.js";
import { type StackRatio, stackGoalLine, stackMeetsGoal } from "./stack-goal.js";
import { InstantService, instantStack } from "./support/instant.js";
import {
  channelGoalLine,
  channelMeetsGoal,
  hostLine,
  percentile,
  ratiosByRow,
  type Row,
  round1,
  rowsFor,
  sampleRss,
  subjectRatios,
  writeResults,
} from "./support/report.js";
import { withOutputs } from "../test/support/adapter-outputs.js";

export const LEVELS = [1, 50, 200] as const;
type Level = (typeof LEVELS)[number];
/**
 * Messages per level: seconds of steady work per level, not a fraction of one (over a level's first
 * thousand replies a subject's rate is still climbing while the JIT works through it).
 */
export const MESSAGES_PER_LEVEL: Readonly<Record<Level, number>> = { 1: 1_000, 50: 3_000, 200: 3_600 };
/**
 * Warm-up messages before each level, at that level's concurrency: a level measured straight after
 * another first runs on the previous level's state (connections, JIT profile) for a while.
 */
const WARMUP_PER_LEVEL: Readonly<Record<Level, number>> = { 1: 300, 50: 1_000, 200: 1_200 };
/** Subjects run in turn, this many rounds; each figure is the median round (the host is shared). */
const ROUNDS = 3;
const WORKERS = 200;
const GOAL_RATIO = 0.5;

/** One subject's figures at one concurrency level. */
export interface LevelFigures {
  readonly threads: number;
  readonly messages: number;
  readonly repliesPerSecond: number;
  readonly ackMs: { readonly p50: number; readonly p99: number };
  readonly replyMs: { readonly p50: number; readonly p99: number };
  /** Web API calls the subject made per finished reply, in all and by method. */
  readonly callsPerReply: number;
  readonly callsByMethod: Readonly<Record<string, number>>;
  readonly peakRssMb: number;
}

const threadsOf = (figures: LevelFigures) => figures.threads;
const round2 = (value: number) => Number(value.toFixed(2));

const hasStop = (blocks: unknown): boolean => JSON.stringify(blocks ?? []).includes("coworker_stop");

/**
 * Which reply a platform call finished, if it finished one: the user message's ts (the thread it
 * started), or `text:<the user's text>` for a bot that answers outside the thread.
 */
export type FinishedReply = (fake: FakeSlack, call: ApiCall) => string | undefined;

/** Coworker's replies: the thread whose reply this call finished, if it finished one. */
export function finishedThread(fake: FakeSlack, call: ApiCall): string | undefined {
  if (call.error) return undefined;
  const args = call.args as { channel?: string; ts?: string; thread_ts?: string; blocks?: unknown };
  if (call.method === "chat.postMessage" && !hasStop(args.blocks)) return args.thread_ts;
  if (
    (call.method === "chat.stopStream" || (call.method === "chat.update" && !hasStop(args.blocks))) &&
    args.channel &&
    args.ts
  ) {
    return fake.state.message(args.channel, args.ts)?.threadTs;
  }
  return undefined;
}

/** Drive `threads` people in closed loops until `total` replies are finished. */
async function drive(
  fake: FakeSlack,
  threads: number,
  total: number,
  finished: FinishedReply,
): Promise<LevelFigures> {
  fake.state.clearHistory();
  const sentAt = new Map<string, { worker: number; at: number }>();
  const tsOfText = new Map<string, string>();
  const replyMs: number[] = [];
  const acks: Promise<number>[] = [];
  const calls = new Map<string, number>();
  const count = (call: ApiCall) => calls.set(call.method, (calls.get(call.method) ?? 0) + 1);
  fake.state.on("call", count);
  let sent = 0;
  const rss = sampleRss();
  const send = (worker: number) => {
    sent += 1;
    const posted = fake.userPosts({ user: `UB${worker}`, channel: `DB${worker}`, text: `m${sent}` });
    sentAt.set(posted.ts, { worker, at: performance.now() });
    tsOfText.set(`text:m${sent}`, posted.ts);
    acks.push(...posted.deliveries.map((d) => d.acked));
  };
  const started = performance.now();
  await new Promise<void>((resolve) => {
    const onCall = (call: ApiCall) => {
      const key = finished(fake, call);
      const thread = key?.startsWith("text:") ? tsOfText.get(key) : key;
      const pending = thread === undefined ? undefined : sentAt.get(thread);
      if (thread === undefined || pending === undefined) return;
      sentAt.delete(thread);
      replyMs.push(performance.now() - pending.at);
      if (replyMs.length === total) {
        fake.state.off("call", onCall);
        resolve();
      } else if (sent < total) send(pending.worker);
    };
    fake.state.on("call", onCall);
    for (let worker = 0; worker < threads && sent < total; worker += 1) send(worker);
  });
  const seconds = (performance.now() - started) / 1000;
  fake.state.off("call", count);
  const peakRssMb = rss.stop();
  const ackSorted = (await Promise.all(acks)).sort((a, b) => a - b);
  const replySorted = [...replyMs].sort((a, b) => a - b);
  return {
    threads,
    messages: total,
    repliesPerSecond: Math.round(total / seconds),
    ackMs: { p50: round1(percentile(ackSorted, 50)), p99: round1(percentile(ackSorted, 99)) },
    replyMs: { p50: round1(percentile(replySorted, 50)), p99: round1(percentile(replySorted, 99)) },
    callsPerReply: round2([...calls.values()].reduce((a, b) => a + b, 0) / total),
    callsByMethod: Object.fromEntries([...calls].map(([method, n]) => [method, round2(n / total)])),
    peakRssMb,
  };
}

/** One subject's figures per level, each measured on a started subject after a warm-up at that level. */
export async function measureLevels(
  fake: FakeSlack,
  counts: Readonly<Record<Level, number>>,
  finished: FinishedReply = finishedThread,
): Promise<LevelFigures[]> {
  const figures: LevelFigures[] = [];
  for (const threads of LEVELS) {
    await drive(fake, threads, WARMUP_PER_LEVEL[threads], finished);
    figures.push(await drive(fake, threads, counts[threads], finished));
  }
  return figures;
}

/**
 * Drive one thread for `messages` replies and keep no figures: a fresh subject answering until its
 * JIT has settled, before its first level is measured.
 */
export async function warmUp(fake: FakeSlack, messages: number, finished: FinishedReply): Promise<void> {
  await drive(fake, 1, messages, finished);
}

/** Per level, the round with the median throughput (rounds interleave the subjects). */
export function medianRounds(rounds: readonly (readonly LevelFigures[])[]): LevelFigures[] {
  return LEVELS.map((_, level) => {
    const sorted = rounds
      .map((round) => round[level] as LevelFigures)
      .sort((a, b) => a.repliesPerSecond - b.repliesPerSecond);
    return sorted[Math.floor(sorted.length / 2)] as LevelFigures;
  });
}

function slackChannel(fake: FakeSlackAddress, service: ConversationService, dataDir: string): SlackChannel {
  return withOutputs(
    new SlackChannel(
      fakeSlackChannelOptions(fake, {
        fileMaxBytes: 1_048_576,
        workspaceRoot: path.join(dataDir, "workspace"),
        service,
      }),
    ),
    service,
  );
}

async function echoApp(fake: FakeSlack): Promise<LevelFigures[]> {
  const app = new App({
    token: fake.state.botToken,
    appToken: fake.state.appToken,
    socketMode: true,
    logLevel: LogLevel.ERROR,
    clientOptions: { slackApiUrl: fake.apiUrl },
  });
  app.message(async ({ message, say }) => {
    if (message.subtype === undefined) await say({ text: message.text ?? "", thread_ts: message.ts });
  });
  await app.start();
  try {
    return await measureLevels(fake, MESSAGES_PER_LEVEL);
  } finally {
    await app.stop();
  }
}

async function channelOnly(fake: FakeSlack): Promise<LevelFigures[]> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "slack-bench-"));
  const channel = slackChannel(fake, new InstantService(), dataDir);
  await channel.start();
  try {
    return await measureLevels(fake, MESSAGES_PER_LEVEL);
  } finally {
    await channel.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** A subject started on the fake Slack, until `stop` shuts it down. */
export interface RunningSubject {
  stop(): Promise<void>;
}

/** The full stack started on the fake Slack at `address` (its store in a fresh directory). */
export async function startFullStack(address: FakeSlackAddress): Promise<RunningSubject> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "slack-bench-"));
  const { store, manager } = await instantStack(undefined, dataDir);
  const channel = slackChannel(address, manager, dataDir);
  await manager.start();
  await channel.start();
  return {
    stop: async () => {
      await stopStack({ channel, manager, store }, 2_000);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

async function fullStack(fake: FakeSlack): Promise<LevelFigures[]> {
  const stack = await startFullStack(fake);
  try {
    return await measureLevels(fake, MESSAGES_PER_LEVEL);
  } finally {
    await stack.stop();
  }
}

function markdown(
  generatedAt: string,
  rows: readonly Row<LevelFigures>[],
  meetsGoal: boolean,
  stackRatios: readonly StackRatio[],
): string {
  const line = (row: Row<LevelFigures>) =>
    `| ${row.subject} | ${row.figures.threads} | ${row.figures.repliesPerSecond} | ${row.ratio} | ` +
    `${row.figures.ackMs.p50} / ${row.figures.ackMs.p99} | ${row.figures.replyMs.p50} / ${row.figures.replyMs.p99} | ` +
    `${row.figures.callsPerReply} | ${row.figures.peakRssMb} |`;
  return [
    "# Slack channel benchmark",
    "",
    hostLine(generatedAt),
    "",
    "Closed-loop DMs against the fake Slack (Web API + Socket Mode on loopback), one message in flight per thread, all in one process.",
    "- **echo**: a bare Bolt app in Socket Mode (`say` into the thread) — the floor.",
    "- **channel**: SlackChannel (validation, mention rules, dedupe, users.info, native streaming renderer, thinking status) on a service that answers at once.",
    "- **full stack**: SlackChannel → SessionManager (default SQLite store) → TurnEngine with an instant in-process model.",
    "",
    "A reply is finished when its last message is final (stopStream, or a post / update without the Stop button).",
    `A throwaway echo pass warms the process; then the subjects run in turn, ${ROUNDS} rounds, and each row is the median round (the host is shared with other work). Before each level a subject warms up at that level's concurrency.`,
    "Ack = push of the Socket Mode envelope → the app's ack. Ratio = replies/s ÷ echo replies/s at the same concurrency.",
    "Calls = Web API calls per finished reply (the echo bot makes one chat.postMessage).",
    "",
    "| subject | threads | replies/s | ratio | ack p50 / p99 ms | reply p50 / p99 ms | calls / reply | peak RSS MB |",
    "|---|---|---|---|---|---|---|---|",
    ...rows.map(line),
    "",
    "Calls per reply by method:",
    "",
    ...rows.map(
      (row) =>
        `- ${row.subject} @ ${row.figures.threads}: ${Object.entries(row.figures.callsByMethod)
          .map(([method, n]) => `${method} ${n}`)
          .join(", ")}`,
    ),
    "",
    channelGoalLine(GOAL_RATIO, meetsGoal),
    "",
    stackGoalLine("the full stack (inbound → finished reply)", stackRatios, GOAL_RATIO),
    "",
  ].join("\n");
}

/** The fake Slack the closed loops drive: WORKERS people, each with a DM to the bot. */
export async function benchFakeSlack(): Promise<FakeSlack> {
  const fake = await startFakeSlack({ pingIntervalMs: 5_000 });
  for (let worker = 0; worker < WORKERS; worker += 1) {
    fake.state.addUser({ id: `UB${worker}`, name: `person${worker}` });
    fake.state.addChannel({ id: `DB${worker}`, name: `dm${worker}`, type: "im", members: [`UB${worker}`] });
  }
  return fake;
}

/** Run the Slack benchmark, write bench/results/slack.{json,md}, and return the figures. */
export async function run(): Promise<Record<string, unknown>> {
  const fake = await benchFakeSlack();
  try {
    await echoApp(fake); // a throwaway pass warms the process (fake, ws, undici, Bolt) for every subject
    const rounds = {
      echo: [] as LevelFigures[][],
      channel: [] as LevelFigures[][],
      stack: [] as LevelFigures[][],
    };
    for (let round = 0; round < ROUNDS; round += 1) {
      rounds.echo.push(await echoApp(fake));
      rounds.channel.push(await channelOnly(fake));
      rounds.stack.push(await fullStack(fake));
    }
    const echo = medianRounds(rounds.echo);
    const channel = medianRounds(rounds.channel);
    const stack = medianRounds(rounds.stack);
    const rows = [
      ...rowsFor("echo", echo, echo),
      ...rowsFor("channel", channel, echo),
      ...rowsFor("full stack", stack, echo),
    ];
    const meetsGoal = channelMeetsGoal(rows, GOAL_RATIO);
    const stackRatios = subjectRatios(rows, "full stack", threadsOf);
    const stackGoal = stackMeetsGoal(stackRatios, GOAL_RATIO);
    const generatedAt = new Date().toISOString();
    const results = {
      generatedAt,
      node: process.version,
      goalRatio: GOAL_RATIO,
      meetsGoal,
      stackMeetsGoal: stackGoal,
      rows,
    };
    await writeResults("slack", results, markdown(generatedAt, rows, meetsGoal, stackRatios));
    return {
      meetsGoal,
      stackMeetsGoal: stackGoal,
      ratios: ratiosByRow(rows, threadsOf),
    };
  } finally {
    await fake.close();
  }
}
