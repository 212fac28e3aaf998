/**
 * Edit budget (issue 17, target 5): one 60-second streamed answer per conversation kind, all at
 * once on the full stacks (production render settings and send limits): a Slack DM (native
 * streaming: chat.appendStream), a Slack DM with streaming refused (the page fallback:
 * chat.update), a Telegram private chat (drafts) and a Telegram group (send + edit). For each,
 * the live updates per minute against what the platform allows (Slack's per-method tiers,
 * Telegram's ~1 update/s per chat and ~20 messages/min per group), and the 429s drawn.
 *
 * The fakes check payloads but do not enforce time-based rate limits, so this benchmark enforces
 * them itself: a call that would exceed its allowance within the sliding window counts as a 429.
 * The run is the real 60 s (the fakes' limits do not scale with a compressed clock). Goal: ≥ 80 %
 * of the allowance used and zero 429s. Writes bench/results/edit-budget.json and .md.
 */
import { PacedModel } from "./support/paced-model.js";
import { hostLine, round1, writeResults } from "./support/report.js";
import { type PlatformCall, slackStack, telegramStack } from "./support/streaming-stacks.js";

const ANSWER_MS = 60_000;
const ANSWER = { thinkMs: 0, everyMs: 100, durationMs: ANSWER_MS, chunk: 8 } as const;
const GOAL_SHARE = 0.8;

interface Budget {
  readonly label: string;
  readonly platform: "slack" | "telegram";
  /** The live-update methods counted. */
  readonly methods: readonly string[];
  /** What the platform allows: this many calls per window. */
  readonly allowed: number;
  readonly windowMs: number;
  readonly allowance: string;
}

const BUDGETS: Readonly<Record<string, Budget>> = {
  native: {
    label: "Slack DM, native stream",
    platform: "slack",
    methods: ["chat.appendStream"],
    allowed: 100,
    windowMs: 60_000,
    allowance: "chat.appendStream Tier 4: 100/min",
  },
  pages: {
    label: "Slack DM, page fallback",
    platform: "slack",
    methods: ["chat.update"],
    allowed: 50,
    windowMs: 60_000,
    allowance: "chat.update Tier 3: 50/min",
  },
  private: {
    label: "Telegram private chat",
    platform: "telegram",
    methods: ["sendMessageDraft", "editMessageText", "sendMessage"],
    allowed: 1,
    windowMs: 1_000,
    allowance: "~1 message/s per chat (60/min)",
  },
  group: {
    label: "Telegram group",
    platform: "telegram",
    methods: ["sendMessage", "editMessageText"],
    allowed: 20,
    windowMs: 60_000,
    allowance: "~20 messages/min per group",
  },
};

interface Figures {
  readonly label: string;
  readonly allowance: string;
  readonly updates: number;
  readonly perMinute: number;
  readonly allowedPerMinute: number;
  readonly share: number;
  readonly rateLimited: number;
  readonly meetsGoal: boolean;
}

/** Calls of one conversation, judged against its budget over the stream's minute. */
function judge(budget: Budget, calls: readonly PlatformCall[], startedAt: number): Figures {
  const counted = calls.filter(
    (call) =>
      budget.methods.includes(call.method) && call.at >= startedAt && call.at <= startedAt + ANSWER_MS,
  );
  let overLimit = counted.filter((call) => call.rateLimited).length;
  for (let i = budget.allowed; i < counted.length; i += 1)
    if (counted[i]!.at - counted[i - budget.allowed]!.at < budget.windowMs) overLimit += 1;
  const perMinute = round1((counted.length * 60_000) / ANSWER_MS);
  const allowedPerMinute = (budget.allowed * 60_000) / budget.windowMs;
  const share = Number((perMinute / allowedPerMinute).toFixed(2));
  return {
    label: budget.label,
    allowance: budget.allowance,
    updates: counted.length,
    perMinute,
    allowedPerMinute,
    share,
    rateLimited: overLimit,
    meetsGoal: share >= GOAL_SHARE && overLimit === 0,
  };
}

/** Run the benchmark (about a minute) and write its results. */
export async function run(): Promise<Record<string, unknown>> {
  const calls = new Map<string, PlatformCall[]>();
  const record = (call: PlatformCall) => {
    const list = calls.get(call.conversation) ?? [];
    list.push(call);
    calls.set(call.conversation, list);
  };
  const model = new PacedModel(ANSWER);
  const native = await slackStack(model, 1, record);
  const pages = await slackStack(model, 1, record, { refuseStreaming: true });
  const telegram = await telegramStack(model, 2, record);
  const startedAt = performance.now();
  const conversations = {
    native: native.post(0, "stream a long answer"),
    pages: pages.post(0, "stream a long answer"),
    private: telegram.post(0, "stream a long answer"),
    group: telegram.post(1, "stream a long answer", true),
  };
  await new Promise((resolve) => setTimeout(resolve, ANSWER_MS + 5_000));
  for (const stack of [native, pages, telegram]) await stack.close();
  const rows = (Object.keys(BUDGETS) as Array<keyof typeof conversations>).map((kind) =>
    judge(BUDGETS[kind]!, calls.get(conversations[kind]) ?? [], startedAt),
  );
  const generatedAt = new Date().toISOString();
  const results = { generatedAt, node: process.version, answerMs: ANSWER_MS, goalShare: GOAL_SHARE, rows };
  const md = [
    "# Edit budget",
    "",
    hostLine(generatedAt),
    "",
    `One ${ANSWER_MS / 1_000}-second streamed answer per conversation, all four at once, on the full stacks with production render`,
    "settings and send limits (the model sends a few words every 100 ms). The fakes do not enforce time-based",
    "limits, so a call beyond its allowance within the sliding window counts as a 429 here.",
    `Goal: ≥ ${GOAL_SHARE * 100} % of the allowance used, zero 429s.`,
    "",
    "| conversation | platform allows | live updates | per min | share | 429s | goal |",
    "|---|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.label} | ${r.allowance} | ${r.updates} | ${r.perMinute} | ${Math.round(r.share * 100)} % | ${r.rateLimited} | ${r.meetsGoal ? "✅" : "❌"} |`,
    ),
    "",
  ].join("\n");
  await writeResults("edit-budget", results, md);
  return { rows };
}
