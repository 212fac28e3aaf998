/**
 * The full stacks the streaming benchmarks (first token, edit budget) drive, each on its fake
 * platform with production render settings and send limits: SlackChannel or TelegramChannel →
 * SessionManager (default SQLite store) → TurnEngine on a paced model. Every platform call is
 * handed to `onCall` in a common shape: the conversation it went to, its method, whether it
 * carried the model's text, and whether the platform refused it with a 429.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { SlackChannel } from "../../src/channels/slack/slack-channel.js";
import { TelegramChannel } from "../../src/channels/telegram/telegram-channel.js";
import { storeSlotBudget } from "../../src/store/slot-budget.js";
import type { ProviderClient } from "../../src/engine/provider/provider.js";
import { fakeSlackChannelOptions } from "../../test/channels/slack/support.js";
import { type ApiCall, startFakeSlack } from "../../test/fakes/fake-slack/index.js";
import {
  type FakeTelegram,
  type RecordedCall,
  startFakeTelegram,
} from "../../test/fakes/fake-telegram/fake-telegram.js";
import { withOutputs } from "../../test/support/adapter-outputs.js";
import { stopStack } from "../../test/support/session-stack.js";
import { instantStack } from "./instant.js";
import { OPEN_UPLOADS } from "../../test/support/test-upload-gate.js";

/** One platform call, as the streaming benchmarks see it. */
export interface PlatformCall {
  /** The DM channel (Slack) or chat id (Telegram) it went to. */
  readonly conversation: string;
  readonly method: string;
  /** Whether it carried text the model wrote (its filler word). */
  readonly carriesText: boolean;
  readonly rateLimited: boolean;
  /** performance.now() when the benchmark saw it. */
  readonly at: number;
}

/** What the model writes, so a call carrying it can be recognised. */
export const MODEL_WORD = "word";

/** A started stack on its fake: post a user message into a conversation, then stop it all. */
export interface StreamingStack {
  readonly platform: "slack" | "telegram";
  /** A person writes `text` in conversation `index` (a DM, or with `group` a group chat). */
  post(index: number, text: string, group?: boolean): string;
  /** Forget the calls and messages the fake platform recorded (it runs in this process). */
  clearHistory(): void;
  close(): Promise<void>;
}

/** How the Slack stack is set up besides its model and conversations. */
export interface SlackStackOptions {
  /** The workspace refuses native streaming, so replies take the page fallback (post + chat.update). */
  readonly refuseStreaming?: boolean;
  /** The session layer's cap on sessions kept in memory (default: the instant stack's). */
  readonly maxSessionsInMemory?: number;
}

/** The Slack full stack on a fresh fake Slack with `conversations` DMs. */
export async function slackStack(
  model: ProviderClient,
  conversations: number,
  onCall: (call: PlatformCall) => void,
  options: SlackStackOptions = {},
): Promise<StreamingStack> {
  const refuseStreaming = options.refuseStreaming ?? false;
  const fake = await startFakeSlack({ pingIntervalMs: 60_000 });
  if (refuseStreaming) fake.state.streaming = "feature_not_enabled";
  for (let i = 0; i < conversations; i += 1) {
    fake.state.addUser({ id: `US${i}`, name: `person${i}` });
    fake.state.addChannel({ id: `DS${i}`, name: `dm${i}`, type: "im", members: [`US${i}`] });
  }
  fake.state.on("call", (call: ApiCall) => onCall(slackCall(call, refuseStreaming ? "pages:" : "")));
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "streaming-bench-"));
  const { store, manager } = await instantStack(
    undefined,
    dataDir,
    undefined,
    model,
    options.maxSessionsInMemory,
  );
  const channel = withOutputs(
    new SlackChannel(
      fakeSlackChannelOptions(fake, {
        fileMaxBytes: 1_048_576,
        workspaceRoot: path.join(dataDir, "workspace"),
        service: manager,
      }),
    ),
    manager,
  );
  await manager.start();
  await channel.start();
  return {
    platform: "slack",
    post: (index, text) => {
      const channelId = `DS${index}`;
      fake.userPosts({ user: `US${index}`, channel: channelId, text: `${channelId} ${text}` });
      return `${refuseStreaming ? "pages:" : ""}${channelId}`;
    },
    clearHistory: () => fake.state.clearHistory(),
    close: async () => {
      await stopStack({ channel, manager, store }, 2_000);
      await fake.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** A Slack call in the common shape; `prefix` tells two fakes' DM channels apart. */
function slackCall(call: ApiCall, prefix: string): PlatformCall {
  const args = call.args as { channel?: string };
  return {
    conversation: `${prefix}${args.channel ?? ""}`,
    method: call.method,
    carriesText: call.method.startsWith("chat.") && JSON.stringify(call.args).includes(MODEL_WORD),
    rateLimited: call.status === 429,
    at: performance.now(),
  };
}

const FIRST_USER = 700_000;
const FIRST_GROUP = -800_000;

/** The Telegram full stack on a fresh fake Bot API, with Telegram's real send limits. */
export async function telegramStack(
  model: ProviderClient,
  conversations: number,
  onCall: (call: PlatformCall) => void,
): Promise<StreamingStack> {
  const tg: FakeTelegram = await startFakeTelegram();
  tg.onCall((call: RecordedCall) =>
    onCall({
      conversation: String(call.params.chat_id ?? ""),
      method: call.method,
      carriesText: String(call.params.text ?? "").includes(MODEL_WORD),
      rateLimited: (call.error ?? "").startsWith("Too Many Requests"),
      at: performance.now(),
    }),
  );
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "streaming-bench-"));
  const { store, manager } = await instantStack(undefined, dataDir, undefined, model);
  const channel = withOutputs(
    new TelegramChannel({
      botToken: tg.token,
      apiRoot: tg.apiRoot,
      allowedUsers: Array.from({ length: conversations }, (_, i) => String(FIRST_USER + i)),
      allowedChats: Array.from({ length: conversations }, (_, i) => String(FIRST_GROUP - i)),
      fileMaxBytes: 1_048_576,
      uploads: OPEN_UPLOADS,
      workspaceRoot: path.join(dataDir, "workspace"),
      service: manager,
      logger: pino({ level: "silent" }),
      botInfo: tg.botInfo,
      accessStore: store.space("grants"),
      budget: storeSlotBudget(store.space("budgets")),
    }),
    manager,
  );
  await manager.start();
  await channel.start();
  return {
    platform: "telegram",
    post: (index, text, group = false) => {
      const from = { id: FIRST_USER + index, first_name: `U${index}` };
      const chat = group
        ? { id: FIRST_GROUP - index, type: "group" as const, title: `group ${index}` }
        : { id: from.id, type: "private" as const, first_name: from.first_name };
      const mention = group ? `@${tg.botInfo.username} ` : "";
      tg.sendUserMessage({ chat, from, text: `${mention}${chat.id} ${text}` });
      return String(chat.id);
    },
    clearHistory: () => {
      tg.calls.length = 0;
    },
    close: async () => {
      await stopStack({ channel, manager, store }, 2_000);
      await tg.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
