/**
 * Against a peer (issue 17, target 3): Coworker's full stack (SlackChannel → SessionManager on the
 * default SQLite store → TurnEngine, approvals ready) and a bot on the Vercel Chat SDK (`chat` +
 * `@chat-adapter/slack` in Socket Mode + `@chat-adapter/state-memory`, replying to each DM with a
 * streamed answer from an instant model), driven by the same fake Slack and the same closed loop
 * as bench/slack-bench.ts: replies/s and ack p50 / p99 at 1, 50 and 200 threads. After a
 * throwaway round of both, the subjects alternate for ROUNDS rounds; each figure is the median
 * round. Goal: Coworker ≥ 1.0× the Chat SDK's replies/s at every level, with a lower ack p99.
 * Writes bench/results/peer.json and .md.
 */
import { createSlackAdapter } from "@chat-adapter/slack";
import { createMemoryState } from "@chat-adapter/state-memory";
import { Chat } from "chat";
import type { ApiCall, FakeSlack } from "../test/fakes/fake-slack/index.js";
import {
  benchFakeSlack,
  fullStack,
  type LevelFigures,
  LEVELS,
  MESSAGES_PER_LEVEL,
  measureLevels,
  medianRounds,
} from "./slack-bench.js";
import { hostLine, writeResults } from "./support/report.js";

const ROUNDS = 3;
const GOAL_RATIO = 1;

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

/** The Chat SDK bot on the fake, answering every DM with a streamed reply in its thread. */
async function chatSdk(fake: FakeSlack): Promise<LevelFigures[]> {
  const bot = new Chat({
    userName: "coworker",
    adapters: {
      slack: createSlackAdapter({
        mode: "socket",
        appToken: fake.state.appToken,
        botToken: fake.state.botToken,
        botUserId: fake.state.botUserId,
        apiUrl: fake.apiUrl,
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
  try {
    return await measureLevels(fake, MESSAGES_PER_LEVEL, finishedPeerReply);
  } finally {
    await bot.shutdown();
  }
}

/** Run the benchmark and write its results. */
export async function run(): Promise<Record<string, unknown>> {
  const fake = await benchFakeSlack();
  try {
    const rounds = { coworker: [] as LevelFigures[][], chatSdk: [] as LevelFigures[][] };
    // A throwaway round warms the process for both: a first round runs on cold code (Coworker's
    // 1-thread rate climbed 229 → 289 → 356 replies/s over three rounds of its own).
    await chatSdk(fake);
    await fullStack(fake);
    for (let round = 0; round < ROUNDS; round += 1) {
      rounds.chatSdk.push(await chatSdk(fake));
      rounds.coworker.push(await fullStack(fake));
    }
    const ours = medianRounds(rounds.coworker);
    const peer = medianRounds(rounds.chatSdk);
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
    const results = { generatedAt, node: process.version, goalRatio: GOAL_RATIO, rows };
    const md = [
      "# Against a peer: the Vercel Chat SDK",
      "",
      hostLine(generatedAt),
      "",
      "The same fake Slack (Web API + Socket Mode on loopback) and the same closed-loop DMs as the Slack benchmark.",
      "- **Coworker**: SlackChannel → SessionManager (default SQLite store, approvals ready) → TurnEngine, instant model.",
      "- **Chat SDK**: `chat` + `@chat-adapter/slack` (Socket Mode) + `@chat-adapter/state-memory`, `onDirectMessage` →",
      "  `thread.post(stream)` with an instant one-chunk stream, concurrency `queue` (the default `drop` loses the next",
      "  message of a DM whose reply is still finishing).",
      `After a throwaway round of both, the subjects alternate, ${ROUNDS} rounds; each row is the median round. Goal: ratio ≥ ${GOAL_RATIO} and a lower ack p99.`,
      "",
      "| threads | Coworker replies/s | Chat SDK replies/s | ratio | ack p50 / p99 ms Coworker | ack p50 / p99 ms Chat SDK | goal |",
      "|---|---|---|---|---|---|---|",
      ...rows.map(
        (r) =>
          `| ${r.threads} | ${r.coworker.repliesPerSecond} | ${r.chatSdk.repliesPerSecond} | ${r.ratio} | ${r.coworker.ackMs.p50} / ${r.coworker.ackMs.p99} | ${r.chatSdk.ackMs.p50} / ${r.chatSdk.ackMs.p99} | ${r.meetsGoal ? "✅" : "❌"} |`,
      ),
      "",
    ].join("\n");
    await writeResults("peer", results, md);
    return { rows: rows.map((r) => ({ threads: r.threads, ratio: r.ratio, meetsGoal: r.meetsGoal })) };
  } finally {
    await fake.close();
  }
}
