/**
 * Scale benchmark (issue 12): the full stack in real processes (`node dist/cli.js start`, Slack
 * Socket Mode against the fake Slack, the fake OpenAI answering at once) — 1 process on SQLite,
 * 1 process on Redis, 3 processes on one Redis. Closed-loop DMs at 50 and 200 concurrent threads:
 * each thread posts a new top-level message as soon as the reply to its previous one arrived.
 * Reports replies per second and reply latency (post → the reply's chat.postMessage or
 * chat.startStream, which carries the whole instant answer) p50 / p99, the CPU each reply cost
 * the Coworker processes, the fakes and Redis (so the host's ceiling is visible),
 * and for Redis the round trips one simple turn costs (MONITOR during a pass of sequential turns:
 * every command a process sent, a script once; background work such as lease renewals included).
 * Goals: 3 processes ≥ 1.3 × 1 process on Redis; ≤ 12 Redis round trips per simple turn. The fakes run in this process and share the cores with the processes.
 * Needs `npm run build` first. Writes bench/results/scale.json and scale.md.
 */
import { readFileSync } from "node:fs";
import os from "node:os";
import { performance } from "node:perf_hooks";
import { createClient } from "@keyv/redis";
import { echoHandler } from "../test/fakes/fake-openai.js";
import type { ApiCall, FakeSlack } from "../test/fakes/fake-slack/index.js";
import { type CoworkerCluster, startCoworkers } from "../test/support/coworker-processes.js";
import { monitorCommands } from "../test/support/redis-monitor.js";
import { hostLine, percentile, round1, writeResults } from "./support/report.js";

const LEVELS = [50, 200] as const;
type Level = (typeof LEVELS)[number];
const REPLIES_PER_LEVEL: Readonly<Record<Level, number>> = { 50: 600, 200: 1_200 };
/**
 * Warm-up replies per process (the fake spreads them evenly): every process has its hot paths
 * compiled before anything is measured — with less, three processes each ran colder code than one
 * process did, at up to twice its CPU per turn.
 */
const WARMUP_REPLIES_PER_PROCESS = 1_500;
const COUNTED_TURNS = 40;
const SETTLE_BEFORE_COUNTING_MS = 3_000;
const GOAL_SPEEDUP = 1.3;
const GOAL_COMMANDS = 12;
const REPLY_TIMEOUT_MS = 60_000;

const SUBJECTS = [
  { name: "1 process, SQLite", store: "sqlite", count: 1 },
  { name: "1 process, Redis", store: "redis", count: 1 },
  { name: "3 processes, Redis", store: "redis", count: 3 },
] as const;

interface LevelFigures {
  readonly threads: Level;
  readonly replies: number;
  readonly repliesPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** CPU per reply (ms) by who spent it, and how many of the host's cores were busy meanwhile. */
  readonly cpu: CpuPerReply;
}

/** CPU time (ms) spent so far: the Coworker processes, this process (the fakes and the load), Redis. */
interface CpuTotals {
  readonly coworkers: number;
  readonly fakes: number;
  readonly redis: number;
}

interface CpuPerReply extends CpuTotals {
  readonly coresBusy: number;
}

interface SubjectFigures {
  readonly subject: string;
  readonly levels: readonly LevelFigures[];
  /** Redis commands the processes sent per simple turn — round trips at most (undefined on SQLite). */
  readonly commandsPerTurn?: number;
  /** Commands scripts ran inside Redis per simple turn (no round trip of their own). */
  readonly commandsInScriptsPerTurn?: number;
  /** The most frequent commands per turn. */
  readonly topCommands?: Readonly<Record<string, number>>;
}

/** Waits for the bot's reply in each thread, from the fake's call stream (no polling). */
class Replies {
  private readonly waiting = new Map<string, () => void>();

  constructor(fake: FakeSlack) {
    fake.state.on("call", (call: ApiCall) => {
      // The answer arrives whole (the model is instant): as a post, or as a native stream's first chunk.
      if ((call.method !== "chat.postMessage" && call.method !== "chat.startStream") || call.error) return;
      const thread = call.args.thread_ts;
      if (typeof thread !== "string") return;
      const done = this.waiting.get(thread);
      if (!done) return;
      this.waiting.delete(thread);
      done();
    });
  }

  /** Post as `user` in their DM; resolves with the reply latency in ms. */
  ask(fake: FakeSlack, user: string, channel: string, text: string): Promise<number> {
    const started = performance.now();
    return new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no reply to "${text}"`)), REPLY_TIMEOUT_MS);
      // The reply comes over the sockets later; registering right after the post cannot miss it.
      const { ts } = fake.userPosts({ user, channel, text });
      this.waiting.set(ts, () => {
        clearTimeout(timer);
        resolve(performance.now() - started);
      });
    });
  }
}

function person(index: number): { user: string; channel: string } {
  return { user: `U${String(index).padStart(5, "0")}`, channel: `D${String(index).padStart(5, "0")}` };
}

/** CPU ms a process has used, from /proc (utime + stime, in clock ticks of 10 ms). */
function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** CPU ms the Redis server at `url` has used (INFO cpu), on a connection of its own. */
async function redisCpuMs(url: string): Promise<number> {
  const client = createClient({ url });
  await client.connect();
  try {
    const info = await client.info("cpu");
    const seconds = (field: string) => Number(new RegExp(`${field}:([\\d.]+)`).exec(info)?.[1]);
    return (seconds("used_cpu_user") + seconds("used_cpu_sys")) * 1_000;
  } finally {
    await client.close();
  }
}

async function cpuTotals(cluster: CoworkerCluster): Promise<CpuTotals> {
  const own = process.cpuUsage();
  return {
    coworkers: cluster.processes.reduce((sum, coworker) => sum + processCpuMs(coworker.child.pid!), 0),
    fakes: (own.user + own.system) / 1_000,
    redis: cluster.redis ? await redisCpuMs(cluster.redis.url) : 0,
  };
}

function cpuPerReply(before: CpuTotals, after: CpuTotals, replies: number, seconds: number): CpuPerReply {
  const per = (key: keyof CpuTotals) => Number(((after[key] - before[key]) / replies).toFixed(2));
  const busy = after.coworkers + after.fakes + after.redis - (before.coworkers + before.fakes + before.redis);
  return {
    coworkers: per("coworkers"),
    fakes: per("fakes"),
    redis: per("redis"),
    coresBusy: Number((busy / 1_000 / seconds).toFixed(2)),
  };
}

/** `threads` closed loops until `total` replies arrived; latencies in ms. */
async function closedLoops(
  fake: FakeSlack,
  replies: Replies,
  threads: number,
  total: number,
): Promise<{ latencies: number[]; seconds: number }> {
  const latencies: number[] = [];
  let sent = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: threads }, async (_, index) => {
      const { user, channel } = person(index);
      while (sent < total) {
        sent += 1;
        latencies.push(await replies.ask(fake, user, channel, `message ${sent}`));
      }
    }),
  );
  return { latencies: latencies.sort((a, b) => a - b), seconds: (performance.now() - started) / 1_000 };
}

/**
 * Redis round trips per sequential simple turn: every command a Coworker process sent counts as
 * one round trip (an upper bound: pipelined commands share one), a script (EVAL / EVALSHA) as one
 * however many commands it runs inside; those are reported apart.
 */
async function countCommands(
  cluster: CoworkerCluster,
  replies: Replies,
): Promise<{ perTurn: number; inScriptsPerTurn: number; top: Record<string, number> }> {
  const fake = cluster.slack!;
  const { user, channel } = person(0);
  // The last level's turns still close after their replies arrived (closing record, lease release):
  // counted, they would be charged to these turns.
  await new Promise((resolve) => setTimeout(resolve, SETTLE_BEFORE_COUNTING_MS));
  const commands = await monitorCommands(
    cluster.redis!.port,
    async () => {
      for (let i = 0; i < COUNTED_TURNS; i++) await replies.ask(fake, user, channel, `counted ${i}`);
    },
    // Let the last turn's background writes (its closing record, the lease release) land.
    500,
  );
  const sent = new Map<string, number>();
  for (const { name } of commands.filter((command) => !command.inScript))
    sent.set(name.toLowerCase(), (sent.get(name.toLowerCase()) ?? 0) + 1);
  const inScripts = commands.filter((command) => command.inScript).length;
  const sorted = [...sent].sort((a, b) => b[1] - a[1]);
  const total = sorted.reduce((sum, [, calls]) => sum + calls, 0);
  const top = Object.fromEntries(
    sorted.slice(0, 8).map(([name, calls]) => [name, round1(calls / COUNTED_TURNS)]),
  );
  return { perTurn: round1(total / COUNTED_TURNS), inScriptsPerTurn: round1(inScripts / COUNTED_TURNS), top };
}

async function measure(subject: (typeof SUBJECTS)[number]): Promise<SubjectFigures> {
  const cluster = await startCoworkers({
    count: subject.count,
    store: subject.store,
    model: echoHandler,
    slack: { redeliverAfterMs: 10_000 },
    yaml: "log:\n  level: warn\n",
  });
  try {
    const fake = cluster.slack!;
    for (let i = 0; i < Math.max(...LEVELS); i++) {
      const { user, channel } = person(i);
      fake.state.addUser({ id: user, name: `u${i}`, displayName: `User ${i}` });
      fake.state.addChannel({ id: channel, name: `dm-${i}`, type: "im", members: [user] });
    }
    const replies = new Replies(fake);
    await closedLoops(fake, replies, 50, WARMUP_REPLIES_PER_PROCESS * subject.count);
    const levels: LevelFigures[] = [];
    for (const threads of LEVELS) {
      fake.state.clearHistory();
      const cpuBefore = await cpuTotals(cluster);
      const { latencies, seconds } = await closedLoops(fake, replies, threads, REPLIES_PER_LEVEL[threads]);
      const cpu = cpuPerReply(cpuBefore, await cpuTotals(cluster), latencies.length, seconds);
      levels.push({
        threads,
        replies: latencies.length,
        repliesPerSecond: round1(latencies.length / seconds),
        p50Ms: round1(percentile(latencies, 50)),
        p99Ms: round1(percentile(latencies, 99)),
        cpu,
      });
      console.log(`  ${subject.name} @${threads}: ${JSON.stringify(levels.at(-1))}`);
    }
    if (subject.store !== "redis") return { subject: subject.name, levels };
    const counted = await countCommands(cluster, replies);
    return {
      subject: subject.name,
      levels,
      commandsPerTurn: counted.perTurn,
      commandsInScriptsPerTurn: counted.inScriptsPerTurn,
      topCommands: counted.top,
    };
  } finally {
    await cluster.close();
  }
}

function markdown(
  generatedAt: string,
  figures: readonly SubjectFigures[],
  goals: Goals,
  load: readonly number[],
): string {
  const rows = figures.flatMap((subject) =>
    subject.levels.map(
      (level) =>
        `| ${subject.subject} | ${level.threads} | ${level.repliesPerSecond} | ${level.p50Ms} | ${level.p99Ms} |`,
    ),
  );
  const cpuRows = figures.flatMap((subject) =>
    subject.levels.map(
      ({ threads, cpu }) =>
        `| ${subject.subject} | ${threads} | ${cpu.coworkers} | ${cpu.fakes} | ${cpu.redis} | ${cpu.coresBusy} |`,
    ),
  );
  const commands = figures
    .filter((subject) => subject.commandsPerTurn !== undefined)
    .map(
      (subject) =>
        `| ${subject.subject} | ${subject.commandsPerTurn} | ${subject.commandsInScriptsPerTurn} | ${Object.entries(
          subject.topCommands ?? {},
        )
          .map(([name, calls]) => `${name} ${calls}`)
          .join(", ")} |`,
    );
  return [
    "# Scale benchmark (several processes on one Redis)",
    "",
    hostLine(generatedAt),
    "",
    `Host load average (1 min) at the start and end of the run: ${load.map((l) => l.toFixed(1)).join(" → ")} on ${os.cpus().length} cores.`,
    "",
    "The full stack in real processes (`node dist/cli.js start`: Slack Socket Mode against the fake Slack, the",
    "fake OpenAI answering at once), 1 process on SQLite, 1 on Redis, 3 on one Redis (each with its own",
    "Socket Mode connection; the fake delivers each envelope to one of them in turn). Closed-loop DMs: each",
    "thread posts a new top-level message as soon as the reply to its previous one arrived. Latency = the",
    "envelope pushed → the reply's chat.postMessage or chat.startStream (it carries the whole instant answer).",
    "The fakes, Redis and the processes share the host's 2 cores.",
    "",
    "| subject | threads | replies/s | p50 ms | p99 ms |",
    "|---|---|---|---|---|",
    ...rows,
    "",
    "Where the CPU went, per reply (ms; Coworker = all its processes, from /proc; fakes = this process: fake",
    "Slack, fake OpenAI and the load; Redis = its INFO cpu), and how many of the host's cores were busy:",
    "",
    "| subject | threads | Coworker | fakes | Redis | cores busy |",
    "|---|---|---|---|---|---|",
    ...cpuRows,
    "",
    `Redis round trips per simple turn (${COUNTED_TURNS} sequential turns, each in a new thread, watched with MONITOR;`,
    "background work included). Every command a process sent counts as one round trip — an upper bound, as",
    "pipelined commands share one — and a script (EVAL) counts once; the commands scripts ran inside Redis",
    "are listed apart (they cost Redis time, not round trips):",
    "",
    "| subject | round trips/turn | commands inside scripts/turn | most frequent sent (per turn) |",
    "|---|---|---|---|",
    ...commands,
    "",
    `Goal: 3 processes ≥ ${GOAL_SPEEDUP}× 1 process on Redis at every level — ${goals.speedups.map((s) => `${s.threads} threads ${s.ratio}×`).join(", ")} — ${goals.speedupMet ? "✅ met" : "❌ not met"}.`,
    `Goal: ≤ ${GOAL_COMMANDS} Redis round trips per simple turn — ${goals.commandsMet ? "✅ met" : "❌ not met"}.`,
    "",
  ].join("\n");
}

interface Goals {
  readonly speedups: readonly { threads: Level; ratio: number }[];
  readonly speedupMet: boolean;
  readonly commandsMet: boolean;
}

function goalsOf(figures: readonly SubjectFigures[]): Goals {
  const one = figures.find((f) => f.subject === "1 process, Redis");
  const three = figures.find((f) => f.subject === "3 processes, Redis");
  const speedups = LEVELS.map((threads) => {
    const base = one?.levels.find((l) => l.threads === threads)?.repliesPerSecond ?? 0;
    const scaled = three?.levels.find((l) => l.threads === threads)?.repliesPerSecond ?? 0;
    return { threads, ratio: base > 0 ? Number((scaled / base).toFixed(2)) : 0 };
  });
  return {
    speedups,
    speedupMet: speedups.every((s) => s.ratio >= GOAL_SPEEDUP),
    commandsMet: (one?.commandsPerTurn ?? Number.POSITIVE_INFINITY) <= GOAL_COMMANDS,
  };
}

/** Run every subject in turn and write the results. */
export async function run(): Promise<Record<string, unknown>> {
  const generatedAt = new Date().toISOString();
  const loadAtStart = os.loadavg()[0] ?? 0;
  const figures: SubjectFigures[] = [];
  for (const subject of SUBJECTS) figures.push(await measure(subject));
  const goals = goalsOf(figures);
  const load = [loadAtStart, os.loadavg()[0] ?? 0];
  const results = { generatedAt, load, figures, goals };
  await writeResults("scale", results, markdown(generatedAt, figures, goals, load));
  return results;
}
