/**
 * The whole Telegram stack for end-to-end tests and the benchmark: the fake Bot API, the fake
 * OpenAI-compatible server, the real SessionManager (SQLite store in a temp dir) with TurnEngines
 * on the real OpenAIProvider and the session test tools, and a TelegramChannel on the real grammY
 * bot and runner. `restart()` rebuilds everything but the two fakes and the data directory. An
 * optional extension adds to every start (another engine, manager and channel options, start/stop
 * steps) — e.g. channel subscriptions.
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
import type { ProviderClient } from "../../../src/engine/provider/provider.js";
import type { EngineFactory } from "../../../src/sessions/engine-context.js";
import type { SessionManager, SessionManagerOptions } from "../../../src/sessions/session-manager.js";
import { createStore } from "../../../src/store/create-store.js";
import type { Store } from "../../../src/store/store.js";
import { type FakeHandler, type FakeOpenAI, startFakeOpenAI } from "../../fakes/fake-openai.js";
import { type FakeTelegram, startFakeTelegram } from "../../fakes/fake-telegram/fake-telegram.js";
import { sessionTestRegistry, ToolRuns } from "../../sessions/helpers/test-tools.js";
import { buildSessionManager, engineFactory, stopStack } from "../../support/session-stack.js";
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
export interface StackExtras {
  /** Replaces the test engine (e.g. the real engine factory with more tools). */
  readonly createEngine?: EngineFactory;
  /** Merged over the stack's SessionManager options. */
  readonly manager?: Partial<SessionManagerOptions>;
  /** Merged over the stack's TelegramChannel options (after `options.channel`). */
  readonly channel?: Partial<TelegramChannelOptions>;
  /** After the manager and the channel have started. */
  readonly started?: (parts: { manager: SessionManager; channel: TelegramChannel }) => Promise<void>;
  /** First step of stopping. */
  readonly stopping?: () => Promise<void>;
}

/** Builds a start's extras from its store, the provider on the fake model and the workspace. */
export type StackExtension = (deps: {
  readonly store: Store;
  readonly provider: ProviderClient;
  readonly workspaceRoot: string;
  readonly openai: FakeOpenAI;
  readonly runs: ToolRuns;
  /** The fake model server's base URL (`http://127.0.0.1:<port>/v1`). */
  readonly openaiBaseURL: string;
}) => StackExtras | Promise<StackExtras>;

/** The shared test engine factory (also used by the benchmarks that import it from here). */
export { engineFactory } from "../../support/session-stack.js";

interface Shared {
  readonly tg: FakeTelegram;
  readonly openai: FakeOpenAI;
  readonly runs: ToolRuns;
  readonly dataDir: string;
}

async function launch(shared: Shared, options: StackOptions): Promise<Stack> {
  const { tg, openai, runs, dataDir } = shared;
  const logger = options.logger ?? pino({ level: "silent" });
  const store = await createStore({ url: options.storeUrl, dataDir });
  const provider = new OpenAIProvider({ baseURL: openai.baseURL, apiKey: "test-key", maxRetries: 0 });
  const workspaceRoot = join(dataDir, "workspace");
  const extras =
    (await options.extend?.({
      store,
      provider,
      workspaceRoot,
      openai,
      runs,
      openaiBaseURL: openai.baseURL,
    })) ?? {};
  const manager = buildSessionManager({
    store,
    createEngine: extras.createEngine ?? engineFactory(provider, sessionTestRegistry(runs)),
    dataDir,
    workspaceRoot,
    model: "fake-model",
    provider: "openai",
    approvers: options.approvers,
    maxSessionsInMemory: 1000,
    logger,
    overrides: extras.manager,
  });
  const channel = withOutputs(
    new TelegramChannel(
      fakeTelegramChannelOptions(tg, {
        allowedUsers: options.allowedUsers.map(String),
        allowedChats: (options.allowedChats ?? []).map(String),
        workspaceRoot,
        service: manager,
        logger,
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
