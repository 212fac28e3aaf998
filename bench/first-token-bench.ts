/**
 * First visible token (issue 17, target 4): from the model's first content chunk to the first
 * platform call carrying text, on the Slack and the Telegram full stack with production render
 * settings and send limits (Slack: DMs with native streaming; Telegram: private chats with
 * drafts). CONVERSATIONS people write at once, ROUNDS times each; the model streams a short answer
 * after thinking for 0 ms (the renderers' hold-back for quick answers shows in full) or for
 * THINK_MS (a model that takes time to its first token, as real ones do). Goal: p50 ≤ 300 ms and
 * p99 ≤ 1 s. Writes bench/results/first-token.json and .md.
 */
import { PacedModel } from "./support/paced-model.js";
import { hostLine, percentile, round1, writeResults } from "./support/report.js";
import {
  type PlatformCall,
  type StreamingStack,
  slackStack,
  telegramStack,
} from "./support/streaming-stacks.js";

const CONVERSATIONS = 20;
const ROUNDS = 4;
const THINK_MS = 700;
const ANSWER = { everyMs: 50, durationMs: 1_500, chunk: 12 } as const;
const GOAL = { p50: 300, p99: 1_000 } as const;

interface Figures {
  readonly platform: string;
  readonly thinkMs: number;
  readonly samples: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly meetsGoal: boolean;
}

type Open = typeof slackStack;

/** One platform at one think time: every conversation writes ROUNDS times, one turn at a time. */
async function measure(open: Open, thinkMs: number): Promise<Figures> {
  const firstChunk = new Map<string, number>();
  const waiting = new Map<string, () => void>();
  const latencies: number[] = [];
  const model = new PacedModel({ thinkMs, ...ANSWER }, (prompt, at) => {
    const conversation = /(-?[\w]+) round/.exec(prompt)?.[1];
    if (conversation !== undefined) firstChunk.set(conversation, at);
  });
  const onCall = (call: PlatformCall) => {
    const chunkAt = firstChunk.get(call.conversation);
    if (call.carriesText && chunkAt !== undefined) {
      firstChunk.delete(call.conversation);
      latencies.push(call.at - chunkAt);
    }
    // The final answer (a post or the stream's stop) ends the turn for the closed loop.
    if (/postMessage|stopStream|sendMessage$/.test(call.method)) waiting.get(call.conversation)?.();
  };
  const stack: StreamingStack = await open(model, CONVERSATIONS, onCall);
  try {
    await Promise.all(
      Array.from({ length: CONVERSATIONS }, async (_, index) => {
        for (let round = 0; round < ROUNDS; round += 1) {
          let conversation = "";
          const ended = new Promise<void>((resolve) => {
            conversation = stack.post(index, `round ${round}`);
            waiting.set(conversation, resolve);
          });
          await ended;
          waiting.delete(conversation);
          // A beat between turns, so the next message is not mistaken for a follow-up mid-turn.
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      }),
    );
  } finally {
    await stack.close();
  }
  const sorted = latencies.sort((a, b) => a - b);
  const p50 = round1(percentile(sorted, 50));
  const p99 = round1(percentile(sorted, 99));
  return {
    platform: stack.platform,
    thinkMs,
    samples: sorted.length,
    p50,
    p99,
    max: round1(sorted.at(-1) ?? 0),
    meetsGoal: p50 <= GOAL.p50 && p99 <= GOAL.p99,
  };
}

/** Run the benchmark and write its results. */
export async function run(): Promise<Record<string, unknown>> {
  const rows: Figures[] = [];
  for (const open of [slackStack, telegramStack])
    for (const thinkMs of [0, THINK_MS]) rows.push(await measure(open, thinkMs));
  const generatedAt = new Date().toISOString();
  const results = { generatedAt, node: process.version, goal: GOAL, answer: ANSWER, rows };
  const md = [
    "# First visible token",
    "",
    hostLine(generatedAt),
    "",
    "The model's first content chunk → the first platform call carrying its text, on the full stack (default SQLite",
    "store) with production render settings and send limits: Slack DMs (native streaming), Telegram private chats",
    `(drafts). ${CONVERSATIONS} conversations at once, ${ROUNDS} turns each; the model streams a ${ANSWER.durationMs / 1_000} s answer after thinking`,
    `0 ms or ${THINK_MS} ms. Goal: p50 ≤ ${GOAL.p50} ms and p99 ≤ ${GOAL.p99} ms.`,
    "",
    "| platform | model thinks (ms) | samples | p50 ms | p99 ms | max ms | goal |",
    "|---|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.platform} | ${r.thinkMs} | ${r.samples} | ${r.p50} | ${r.p99} | ${r.max} | ${r.meetsGoal ? "✅" : "❌"} |`,
    ),
    "",
  ].join("\n");
  await writeResults("first-token", results, md);
  return { rows };
}
