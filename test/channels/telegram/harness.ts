/**
 * Test harness for the Telegram channel: the fake Bot API, a TelegramChannel on the real grammY
 * bot and runner, a scriptable in-test ConversationService, and a pino logger whose lines tests
 * can read. Timings are shortened; everything else is production code.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import pino from "pino";
import { createStore } from "../../../src/store/create-store.js";
import { storeSlotBudget } from "../../../src/store/slot-budget.js";
import type { ButtonPress, PressResult } from "../../../src/core/button-press.js";
import type { InboundMessage } from "../../../src/core/inbound-message.js";
import type { ReceiveResult } from "../../../src/sessions/contracts.js";
import type { ThreadOutput } from "../../../src/core/thread-output.js";
import {
  TelegramChannel,
  type TelegramChannelOptions,
} from "../../../src/channels/telegram/telegram-channel.js";
import {
  type FakeChat,
  type FakeTelegram,
  type FakeUser,
  startFakeTelegram,
} from "../../fakes/fake-telegram/fake-telegram.js";
import { type RecordedCommand, RecordingService } from "../../support/recording-service.js";
import { withOutputs } from "../../support/adapter-outputs.js";
import { OPEN_UPLOADS } from "../../support/test-upload-gate.js";

export const ALICE: FakeUser = { id: 1001, first_name: "Alice", username: "alice" };
export const BOB: FakeUser = { id: 1002, first_name: "Bob", username: "bob" };
export const MALLORY: FakeUser = { id: 6666, first_name: "Mallory" };
export const ALICE_DM: FakeChat = { id: ALICE.id, type: "private", first_name: "Alice" };
export const BOB_DM: FakeChat = { id: BOB.id, type: "private", first_name: "Bob" };
export const MALLORY_DM: FakeChat = { id: MALLORY.id, type: "private", first_name: "Mallory" };
export const GROUP: FakeChat = { id: -100200, type: "supergroup", title: "Team" };
export const OPEN_GROUP: FakeChat = { id: -100300, type: "supergroup", title: "Open" };
export const FORUM: FakeChat = { id: -100400, type: "supergroup", title: "Forum", is_forum: true };

/** The secret the tests' webhook is registered behind. */
export const WEBHOOK_SECRET = "s3cret-token_1";
/** The webhook the tests register: on a free loopback port, behind WEBHOOK_SECRET. */
export const TEST_WEBHOOK = {
  url: "https://bot.example.test/tg/hook",
  secret: WEBHOOK_SECRET,
  port: 0,
  path: "/tg/hook",
  host: "127.0.0.1",
};

/** A ConversationService double: records everything, runs `onReceive` as the "turn". */
export class ScriptedService extends RecordingService {
  onReceive: (message: InboundMessage, output: ThreadOutput) => Promise<void> | void = () => {};
  onPress: (press: ButtonPress) => PressResult | Promise<PressResult> = () => ({
    status: "accepted",
    message: "Done",
  });
  readonly turns: Promise<void>[] = [];

  protected handle(message: InboundMessage): ReceiveResult {
    this.turns.push(Promise.resolve(this.onReceive(message, this.output(message.target))));
    return { status: "started" };
  }

  protected decide(press: ButtonPress): PressResult | Promise<PressResult> {
    return this.onPress(press);
  }

  protected reply({ name, args }: RecordedCommand): string {
    return `ran ${name}${args.length ? ` ${args.join(" ")}` : ""}`;
  }
}

export interface Harness {
  readonly tg: FakeTelegram;
  readonly service: ScriptedService;
  readonly channel: TelegramChannel;
  readonly workspace: string;
  readonly logs: () => Record<string, unknown>[];
  /** Stop the channel and start a new one on the same fake (a process restart). */
  restart(service?: ScriptedService): Promise<Harness>;
  close(): Promise<void>;
}

export const FAST_TIMING = {
  private: { intervalMs: 60, firstPreviewMs: 30 },
  group: { intervalMs: 120, firstPreviewMs: 30 },
} as const;

/** Roomy limits so tests run at their own pace; the throttle has its own tests. */
export const TEST_SEND_LIMITS = {
  perChat: { ratePerSecond: 200, burst: 20 },
  perGroup: { ratePerSecond: 200, burst: 20 },
  global: { ratePerSecond: 2000, burst: 200 },
} as const;

/** What a test must give a TelegramChannel on the fake Bot API; anything else it gives overrides the defaults. */
export type FakeTelegramChannelSetup = Pick<
  TelegramChannelOptions,
  "allowedUsers" | "allowedChats" | "workspaceRoot" | "service" | "logger" | "accessStore" | "budget"
> &
  Partial<TelegramChannelOptions>;

/**
 * TelegramChannel options on the fake Bot API: long polling with short timeouts and backoff, a
 * bounded retry, fast preview timing and roomy send limits — with `setup` over them.
 */
export function fakeTelegramChannelOptions(
  tg: FakeTelegram,
  setup: FakeTelegramChannelSetup,
): TelegramChannelOptions {
  return {
    botToken: tg.token,
    apiRoot: tg.apiRoot,
    fileMaxBytes: 1024 * 1024,
    botInfo: tg.botInfo,
    timing: FAST_TIMING,
    pollTimeoutSeconds: 5,
    pollingBackoff: { initialMs: 20, maxMs: 200 },
    retry: { maxRetryAttempts: 3, maxDelaySeconds: 5 },
    sendLimits: TEST_SEND_LIMITS,
    uploads: OPEN_UPLOADS,
    ...setup,
  };
}

/**
 * Start the fake Bot API and a channel on it (long polling unless options say otherwise), with
 * pairings in a memory store that outlives `restart()`, as a real store outlives a process.
 */
export async function startHarness(
  overrides: Partial<TelegramChannelOptions> = {},
  fakeOptions: Parameters<typeof startFakeTelegram>[0] = {},
): Promise<Harness> {
  const tg = await startFakeTelegram(fakeOptions);
  const workspace = await mkdtemp(join(tmpdir(), "tg-ws-"));
  const store = await createStore({ url: "memory:", dataDir: tmpdir() });
  const launch = async (service: ScriptedService): Promise<Harness> => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _encoding, callback) {
        for (const line of String(chunk).split("\n")) if (line) lines.push(JSON.parse(line));
        callback();
      },
    });
    const channel = withOutputs(
      new TelegramChannel(
        fakeTelegramChannelOptions(tg, {
          allowedUsers: [String(ALICE.id), String(BOB.id)],
          allowedChats: [String(OPEN_GROUP.id)],
          workspaceRoot: workspace,
          service,
          logger: pino({ level: "debug" }, sink),
          accessStore: store.space("grants"),
          budget: storeSlotBudget(store.space("budgets")),
          ...overrides,
        }),
      ),
      overrides.service ?? service,
    );
    await channel.start();
    const harness: Harness = {
      tg,
      service,
      channel,
      workspace,
      logs: () => lines,
      restart: async (next = new ScriptedService()) => {
        await channel.stop();
        return launch(next);
      },
      close: async () => {
        await channel.stop();
        await tg.close();
        await store.close();
        await rm(workspace, { recursive: true, force: true });
      },
    };
    return harness;
  };
  return launch(new ScriptedService());
}
