/**
 * Support for the schedules end-to-end tests: the app's scheduled tasks and channel
 * subscriptions (AppSchedules and AppSubscriptions with the real engine factory, the
 * SessionManager as their wake sink, hooks merged as the app merges them) as an extension of the
 * Slack and Telegram harnesses, with a test-only minimum interval of one second so a cron task
 * with a seconds field can run twice within a test (and a wake-up may be a second ahead).
 */
import pino from "pino";
import { AppSchedules } from "../../src/app/app-schedules.js";
import { AppSubscriptions } from "../../src/app/app-subscriptions.js";
import { mergeSessionHooks } from "../../src/app/session-hooks.js";
import { createEngineFactory } from "../../src/app/engine-factory.js";
import type { ChannelAdapter, ChannelHooks } from "../../src/channels/channel-adapter.js";
import type { ProviderClient } from "../../src/engine/provider/provider.js";
import type { PlatformDirectory } from "../../src/subscriptions/platform-directory.js";
import { DEFAULT_SCHEDULE_SETTINGS, type ScheduleSettings } from "../../src/schedules/schedule-settings.js";
import { storeSlotBudget } from "../../src/store/slot-budget.js";
import type { ProcessExtension } from "../channels/slack/e2e-harness.js";
import type { StackExtension as TelegramExtension } from "../channels/telegram/stack.js";
import type { StackExtension } from "../support/session-stack.js";
import { TEST_SETTINGS } from "../subscriptions/e2e-support.js";

/** Runs may be one second apart, and a wake-up a second ahead (the default guards: five minutes, one). */
export const FAST_SCHEDULES: ScheduleSettings = Object.freeze({
  ...DEFAULT_SCHEDULE_SETTINGS,
  minIntervalMs: 1_000,
  minWakeMs: 1_000,
});

const silent = pino({ level: "silent" });

function parts(provider: ProviderClient, workspaceRoot: string) {
  const subscriptions = new AppSubscriptions();
  const schedules = new AppSchedules();
  return {
    subscriptions,
    schedules,
    createEngine: createEngineFactory({
      provider,
      workspaceRoot,
      extraTools: () => [...subscriptions.tools, ...schedules.tools],
    }),
    manager: mergeSessionHooks(subscriptions.sessionOptions(), schedules.sessionOptions()),
    channel: {
      ...subscriptions.channelHooks,
      onBotRemoved: (channel: Parameters<typeof subscriptions.channelHooks.onBotRemoved>[0]) => {
        subscriptions.channelHooks.onBotRemoved(channel);
        schedules.channelGone(channel);
      },
    },
    stopping: async () => {
      await schedules.shutdown();
      await subscriptions.shutdown();
    },
  };
}

/** A started channel: its directory, and its people's timezones where the platform knows them. */
type StartedChannel = Pick<ChannelAdapter, "platform" | "timezoneOf"> & { directory(): PlatformDirectory };

/** A stack with the app's schedules and subscriptions (built again for every restart). */
function withSchedules<C extends StartedChannel>(
  settings: ScheduleSettings,
  approvers: readonly string[],
): StackExtension<C, ChannelHooks> {
  return ({ store, provider, workspaceRoot }) => {
    const { subscriptions, schedules, ...extras } = parts(provider, workspaceRoot);
    return {
      ...extras,
      started: async ({ manager, channel }) => {
        await subscriptions.open({
          store,
          sessions: manager,
          settings: TEST_SETTINGS,
          approvers,
          logger: silent,
          budget: storeSlotBudget(store.space("budgets")),
        });
        subscriptions.registerDirectory(channel.directory());
        await schedules.open({
          store,
          sessions: manager,
          settings,
          approvers,
          logger: silent,
          budget: storeSlotBudget(store.space("budgets")),
        });
        const timezoneOf = channel.timezoneOf?.bind(channel);
        if (timezoneOf)
          schedules.registerTimezones(channel.platform, (_target, userId) => timezoneOf(userId));
        schedules.start();
      },
    };
  };
}

/** The Slack harness with the app's schedules and subscriptions. */
export function slackSchedules(settings: ScheduleSettings = FAST_SCHEDULES): ProcessExtension {
  return withSchedules(settings, ["slack:U9BOSS"]);
}

/** The Telegram stack with the app's schedules and subscriptions. */
export function telegramSchedules(settings: ScheduleSettings = FAST_SCHEDULES): TelegramExtension {
  return withSchedules(settings, []);
}

/** An ISO time `ms` from now. */
export function fromNow(ms: number): string {
  return new Date(Date.now() + ms).toISOString();
}

/** The first task id in a text. */
export function taskIdIn(text: string): string {
  const id = /(tsk|wak)_[0-9a-f]{12}/.exec(text)?.[0];
  if (!id) throw new Error(`no task id in: ${text}`);
  return id;
}
