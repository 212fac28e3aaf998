/**
 * The whole Telegram stack for end-to-end tests and the benchmark: the fake Bot API, the fake
 * OpenAI-compatible server, the real SessionManager (SQLite store in a temp dir) with TurnEngines
 * on the real OpenAIProvider and the session test tools, and a TelegramChannel on the real grammY
 * bot and runner. `restart()` rebuilds everything but the two fakes and the data directory. The
 * stack itself is the shared builder's (test/support/session-stack.ts); an optional extension
 * adds to every start (another engine, manager and channel options, start/stop steps) — e.g.
 * channel subscriptions.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino, { type Logger } from "pino";
import {
  TelegramChannel,
  type TelegramChannelOptions,
} from "../../../src/channels/telegram/telegram-channel.js";
import { OpenAIProvider } from "../../../src/engine/provider/openai-provider.js";
import type { SessionManager } from "../../../src/sessions/session-manager.js";
import type { Store } from "../../../src/store/store.js";
import { storeSlotBudget } from "../../../src/store/slot-budget.js";
import { type FakeHandler, type FakeOpenAI, startFakeOpenAI } from "../../fakes/fake-openai.js";
import { type FakeTelegram, startFakeTelegram } from "../../fakes/fake-telegram/fake-telegram.js";
import { ToolRuns } from "../../sessions/helpers/test-tools.js";
import {
  openStack,
  type StackExtension as SharedStackExtension,
  type StackExtras as SharedStackExtras,
  stopStack,
} from "../../support/session-stack.js";
import { fakeTelegramChannelOptions } from "./harness.js";
import { withOutputs } from "../../support/adapter-outputs.js";

export interface Stack {
  readonly tg: FakeTelegram;
  readonly openai: FakeOpenAI;
  readonly manager: SessionManager;
  readonly channel: TelegramChannel;
  readonly store: Store;
  readonly runs: ToolRuns;
  readonly dataDir: string;
  /** Drain the sessions, stop the channel, close the store; start them again on the same data. */
  restart(): Promise<Stack>;
  close(): Promise<void>;
}

export interface StackOptions {
  readonly handler?: FakeHandler;
  /** Telegram user ids allowed to use the bot. */
  readonly allowedUsers: readonly number[];
  readonly allowedChats?: readonly number[];
  /** Platform-qualified approvers besides the requester ("telegram:1002"). */
  readonly approvers?: readonly string[];
  readonly channel?: Partial<TelegramChannelOptions>;
  readonly logger?: Logger;
  /** Store URL; SQLite in the data dir by default. */
  readonly storeUrl?: string;
  /** Adds to every start of the stack (the first and each restart). */
  readonly extend?: StackExtension;
}

/** What an extension adds to one start of the stack. */
export type StackExtras = SharedStackExtras<TelegramChannel, Partial<TelegramChannelOptions>>;

/** Builds a start's extras from its store, the provider on the fake model and the workspace. */
export type StackExtension = SharedStackExtension<TelegramChannel, Partial<TelegramChannelOptions>>;

interface Shared {
  readonly tg: FakeTelegram;
  readonly openai: FakeOpenAI;
  readonly runs: ToolRuns;
  readonly dataDir: string;
}

async function launch(shared: Shared, options: StackOptions): Promise<Stack> {
  const { tg, openai, runs, dataDir } = shared;
  const logger = options.logger ?? pino({ level: "silent" });
  const workspaceRoot = join(dataDir, "workspace");
  const { store, manager, extras } = await openStack({
    provider: new OpenAIProvider({ baseURL: openai.baseURL, apiKey: "test-key", maxRetries: 0 }),
    dataDir,
    workspaceRoot,
    openai,
    runs,
    storeUrl: options.storeUrl,
    approvers: options.approvers,
    maxSessionsInMemory: 1000,
    logger,
    extend: options.extend,
  });
  const channel = withOutputs(
    new TelegramChannel(
      fakeTelegramChannelOptions(tg, {
        allowedUsers: options.allowedUsers.map(String),
        allowedChats: (options.allowedChats ?? []).map(String),
        workspaceRoot,
        service: manager,
        logger,
        accessStore: store.space("grants"),
        budget: storeSlotBudget(store.space("budgets")),
        ...options.channel,
        ...extras.channel,
      }),
    ),
    manager,
  );
  await manager.start();
  await channel.start();
  await extras.started?.({ manager, channel });
  return {
    ...shared,
    manager,
    channel,
    store,
    restart: async () => {
      await stopStack({ stopping: extras.stopping, channel, manager, store }, 1000);
      return launch(shared, options);
    },
    close: async () => {
      await stopStack({ stopping: extras.stopping, channel, manager, store }, 1000);
      await tg.close();
      await openai.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Start the fakes and the stack on them. */
export async function startStack(options: StackOptions): Promise<Stack> {
  const tg = await startFakeTelegram();
  const openai = await startFakeOpenAI(options.handler);
  const dataDir = await mkdtemp(join(tmpdir(), "tg-stack-"));
  return launch({ tg, openai, runs: new ToolRuns(), dataDir }, options);
}
