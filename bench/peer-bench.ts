/**
 * Against a peer (issue 17, target 3): Coworker's full stack (SlackChannel → SessionManager on the
 * default SQLite store → TurnEngine, approvals ready) and a bot on the Vercel Chat SDK (`chat` +
 * `@chat-adapter/slack` in Socket Mode + `@chat-adapter/state-memory`, replying to each DM with a
 * streamed answer from an instant model), driven by the same fake Slack and the same closed loop
 * as bench/slack-bench.ts: replies/s and ack p50 / p99 at 1, 50 and 200 threads. Each subject
 * runs in a process of its own and the fake in this one, as Slack is remote in use: the fake
 * times an ack when it arrives (sharing one event loop, it read an ack only once the subject's
 * work after acking had run, adding that work to every ack), and neither subject's CPU pays for
 * the fake's side of its calls. The subjects alternate for ROUNDS rounds, each in a fresh process
 * that first answers PROCESS_WARMUP messages; each figure is the median round. Goal: Coworker ≥
 * 1.0× the Chat SDK's replies/s at every level, with a lower ack p99. Each subject also reports its
 * scavenges (young-generation collections) over its round: at one thread an envelope that arrives
 * during one waits it out, so their length is what an ack's p99 there is made of.
 * Writes bench/results/peer.json and .md.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { constants, type NodeGCPerformanceDetail, PerformanceObserver } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { createSlackAdapter } from "@chat-adapter/slack";
import { createMemoryState } from "@chat-adapter/state-memory";
import { Chat } from "chat";
import { z } from "zod";
import {
  type FakeSlackAddress,
  fakeSlackAddress,
  fakeSlackAddressSchema,
} from "../test/channels/slack/support.js";
import type { ApiCall, FakeSlack } from "../test/fakes/fake-slack/index.js";
import { REPO_ROOT } from "../test/support/repo-root.js";
import {
  benchFakeSlack,
  type FinishedReply,
  finishedThread,
  type LevelFigures,
  LEVELS,
  MESSAGES_PER_LEVEL,
  measureLevels,
  medianRounds,
  type RunningSubject,
  startFullStack,
  warmUp,
} from "./slack-bench.js";
import { hostLine, writeResults } from "./support/report.js";

const ROUNDS = 3;
const GOAL_RATIO = 1;
/**
 * Messages at 1 thread a subject's fresh process answers before its first level: from a start,
 * in 500-message windows, the Chat SDK bot ran 241, 351, 409, 430 … replies/s and levelled off
 * near 450 after about 2,000; Coworker ran 308, 300, 375, 407, 416, 432 … and levelled off after
 * about 3,000.
 */
const PROCESS_WARMUP = 3_000;
/** The environment variable that hands a subject's process the fake's address (as JSON). */
const ADDRESS_VARIABLE = "PEER_BENCH_FAKE_SLACK";

/**
 * The Chat SDK answers a DM in the DM itself (not in a thread): a placeholder post, then an update
 * carrying the whole answer, which finishes the reply to the user's text it quotes.
 */
function finishedPeerReply(_fake: FakeSlack, call: ApiCall): string | undefined {
  if (call.error || (call.method !== "chat.update" && call.method !== "chat.postMessage")) return undefined;
  const args = call.args as { text?: string; markdown_text?: string };
  const quoted = /You said: (m\d+)/.exec(args.markdown_text ?? args.text ?? "")?.[1];
  return quoted === undefined ? undefined : `text:${quoted}`;
}

/** The instant model's answer, streamed as the Chat SDK takes it: an async iterable of text. */
async function* instantAnswer(text: string): AsyncIterable<string> {
  yield `You said: ${text}`;
}

/** The Chat SDK bot on the fake at `address`, answering every DM with a streamed reply in its thread. */
async function startChatSdk(address: FakeSlackAddress): Promise<RunningSubject> {
  const bot = new Chat({
    userName: "coworker",
    adapters: {
      slack: createSlackAdapter({
        mode: "socket",
        appToken: address.state.appToken,
        botToken: address.state.botToken,
        botUserId: address.state.botUserId,
        apiUrl: address.apiUrl,
      }),
    },
    state: createMemoryState(),
    // The default ("drop") refuses a DM's next message while its reply is still being finished.
    concurrency: "queue",
    logger: "error",
  });
  bot.onDirectMessage(async (thread, message) => {
    await thread.post(instantAnswer(message.text));
  });
  await bot.initialize();
  return { stop: () => bot.shutdown() };
}

const SUBJECTS = {
  coworker: { start: startFullStack, finished: finishedThread },
  chatSdk: { start: startChatSdk, finished: finishedPeerReply },
} as const satisfies Record<
  string,
  { start: (address: FakeSlackAddress) => Promise<RunningSubject>; finished: FinishedReply }
>;
type Subject = keyof typeof SUBJECTS;

/** A subject's scavenges over its round (warm-up and every level). */
const scavengesSchema = z.object({
  count: z.number(),
  meanMs: z.number(),
  maxMs: z.number(),
  overOneMs: z.number(),
});
type Scavenges = z.infer<typeof scavengesSchema>;

/** What a subject's process tells this one: it is running, then (asked to stop) its peak RSS and scavenges. */
const subjectReportSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("ready") }),
  z.object({ kind: z.literal("stopped"), peakRssMb: z.number(), scavenges: scavengesSchema }),
]);
type SubjectReport = z.infer<typeof subjectReportSchema>;

/** One subject's round: its figures per level, and its scavenges. */
interface Round {
  readonly levels: LevelFigures[];
  readonly scavenges: Scavenges;
}

/** Time every scavenge from now on; `stop` ends that and sums them up. */
function timeScavenges(): { stop(): Scavenges } {
  const pauses: number[] = [];
  const observer = new PerformanceObserver((list) => {
    // A gc entry's detail says which collection it was (the installed types leave it out).
    for (const entry of list.getEntries())
      if (
        (entry as { detail?: NodeGCPerformanceDetail }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR
      )
        pauses.push(entry.duration);
  });
  observer.observe({ entryTypes: ["gc"] });
  return {
    stop: () => {
      observer.disconnect();
      const total = pauses.reduce((sum, pause) => sum + pause, 0);
      const round = (ms: number) => Number(ms.toFixed(2));
      return {
        count: pauses.length,
        meanMs: round(pauses.length === 0 ? 0 : total / pauses.length),
        maxMs: round(Math.max(0, ...pauses)),
        overOneMs: pauses.filter((pause) => pause > 1).length,
      };
    },
  };
}

/** The next report of `child`, or a failure when it exits first. */
function nextReport(child: ChildProcess, subject: Subject): Promise<SubjectReport> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: unknown) => {
      child.off("exit", onExit);
      const parsed = subjectReportSchema.safeParse(message);
      if (parsed.success) resolve(parsed.data);
      else reject(new Error(`peer bench subject "${subject}" sent ${JSON.stringify(message)}`));
    };
    const onExit = () => {
      child.off("message", onMessage);
      reject(new Error(`peer bench subject "${subject}" exited before it reported`));
    };
    child.once("message", onMessage);
    child.once("exit", onExit);
  });
}

/**
 * One round of `subject`: started in a process of its own on `fake`, warmed up, measured level by
 * level, then stopped. Its peak RSS is the process's, over the whole round. (The subject's stdout
 * is dropped: the Chat SDK logs each connection there.)
 */
async function measureApart(fake: FakeSlack, subject: Subject): Promise<Round> {
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), subject], {
    cwd: REPO_ROOT,
    env: { ...process.env, [ADDRESS_VARIABLE]: JSON.stringify(fakeSlackAddress(fake)) },
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  try {
    if ((await nextReport(child, subject)).kind !== "ready")
      throw new Error(`peer bench subject "${subject}" did not start`);
    const { finished } = SUBJECTS[subject];
    await warmUp(fake, PROCESS_WARMUP, finished);
    const figures = await measureLevels(fake, MESSAGES_PER_LEVEL, finished);
    child.send("stop");
    const stopped = await nextReport(child, subject);
    if (stopped.kind !== "stopped") throw new Error(`peer bench subject "${subject}" did not stop`);
    return {
      levels: figures.map((level) => ({ ...level, peakRssMb: stopped.peakRssMb })),
      scavenges: stopped.scavenges,
    };
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, "exit");
      child.kill();
      await exited;
    }
  }
}

/** As a subject's process: start the subject, report "ready", and on "stop" stop it and report. */
async function subjectMain(subject: Subject): Promise<void> {
  const address = fakeSlackAddressSchema.parse(JSON.parse(process.env[ADDRESS_VARIABLE] ?? "null"));
  const running = await SUBJECTS[subject].start(address);
  const report = (message: SubjectReport) =>
    new Promise<void>((resolve, reject) =>
      process.send?.(message, (error: Error | null) => (error ? reject(error) : resolve())),
    );
  const scavenges = timeScavenges();
  await report({ kind: "ready" });
  await once(process, "message");
  const timed = scavenges.stop();
  await running.stop();
  await report({
    kind: "stopped",
    peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    scavenges: timed,
  });
  process.disconnect();
}

/** Run the benchmark and write its results. */
export async function run(): Promise<Record<string, unknown>> {
  const fake = await benchFakeSlack();
  try {
    const rounds: Record<Subject, Round[]> = { coworker: [], chatSdk: [] };
    for (let round = 0; round < ROUNDS; round += 1) {
      rounds.chatSdk.push(await measureApart(fake, "chatSdk"));
      rounds.coworker.push(await measureApart(fake, "coworker"));
    }
    const ours = medianRounds(rounds.coworker.map((round) => round.levels));
    const peer = medianRounds(rounds.chatSdk.map((round) => round.levels));
    const scavenges = {
      coworker: rounds.coworker.map((round) => round.scavenges),
      chatSdk: rounds.chatSdk.map((round) => round.scavenges),
    };
    const rows = LEVELS.map((threads, i) => {
      const ratio = Number((ours[i]!.repliesPerSecond / peer[i]!.repliesPerSecond).toFixed(2));
      return {
        threads,
        coworker: ours[i]!,
        chatSdk: peer[i]!,
        ratio,
        meetsGoal: ratio >= GOAL_RATIO && ours[i]!.ackMs.p99 < peer[i]!.ackMs.p99,
      };
    });
    const generatedAt = new Date().toISOString();
    const results = { generatedAt, node: process.version, goalRatio: GOAL_RATIO, rows, scavenges };
    const scavengeCells = (round: Scavenges) =>
      `${round.count} · ${round.meanMs} · ${round.maxMs} · ${round.overOneMs}`;
    const md = [
      "# Against a peer: the Vercel Chat SDK",
      "",
      hostLine(generatedAt),
      "",
      "The same fake Slack (Web API + Socket Mode on loopback) and the same closed-loop DMs as the Slack benchmark, with",
      "each subject in a process of its own and the fake in the bench's: acks are timed as they arrive, as a remote Slack",
      "times them, and neither subject pays for the fake's side of its calls.",
      "- **Coworker**: SlackChannel → SessionManager (default SQLite store, approvals ready) → TurnEngine, instant model.",
      "- **Chat SDK**: `chat` + `@chat-adapter/slack` (Socket Mode) + `@chat-adapter/state-memory`, `onDirectMessage` →",
      "  `thread.post(stream)` with an instant one-chunk stream, concurrency `queue` (the default `drop` loses the next",
      "  message of a DM whose reply is still finishing).",
      `The subjects alternate, ${ROUNDS} rounds, each in a fresh process that first answers ${PROCESS_WARMUP} messages at 1 thread;`,
      `each row is the median round. Goal: ratio ≥ ${GOAL_RATIO} and a lower ack p99.`,
      "",
      "| threads | Coworker replies/s | Chat SDK replies/s | ratio | ack p50 / p99 ms Coworker | ack p50 / p99 ms Chat SDK | goal |",
      "|---|---|---|---|---|---|---|",
      ...rows.map(
        (r) =>
          `| ${r.threads} | ${r.coworker.repliesPerSecond} | ${r.chatSdk.repliesPerSecond} | ${r.ratio} | ${r.coworker.ackMs.p50} / ${r.coworker.ackMs.p99} | ${r.chatSdk.ackMs.p50} / ${r.chatSdk.ackMs.p99} | ${r.meetsGoal ? "✅" : "❌"} |`,
      ),
      "",
      "Scavenges per round (its warm-up and every level): count · mean ms · max ms · how many over 1 ms. An envelope",
      "that arrives during one waits it out, which is what an ack's p99 at one thread is made of.",
      "",
      "| round | Coworker | Chat SDK |",
      "|---|---|---|",
      ...scavenges.coworker.map(
        (ours, i) =>
          `| ${i + 1} | ${scavengeCells(ours)} | ${scavengeCells(scavenges.chatSdk[i] as Scavenges)} |`,
      ),
      "",
    ].join("\n");
    await writeResults("peer", results, md);
    return { rows: rows.map((r) => ({ threads: r.threads, ratio: r.ratio, meetsGoal: r.meetsGoal })) };
  } finally {
    await fake.close();
  }
}

const requested = process.argv[2];
if (process.argv[1] === fileURLToPath(import.meta.url) && requested !== undefined && requested in SUBJECTS) {
  await subjectMain(requested as Subject);
}
