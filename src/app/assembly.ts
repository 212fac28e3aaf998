/**
 * The wiring point of `coworker start`: the session layer (SessionManager, engine factory,
 * provider, tools, approvals — see conversation-assembly.ts) and the Slack and Telegram channel
 * starters, sharing one Messenger registry per assembly so messaging tools reach the channels
 * that are running, one set of channel subscriptions so what the channels see reaches them, and
 * one set of scheduled tasks (the channels' timezone lookups and channel removals reach them), and
 * one set of access rules, so a standing item wakes a turn only for someone still allowed. The
 * session layer knows the platform channels, so a console beside one of them checks its approvals.
 */
import type { AppAssembly } from "./app-parts.js";
import { AppSchedules } from "./app-schedules.js";
import { AppSubscriptions } from "./app-subscriptions.js";
import { createConversation } from "./conversation-assembly.js";
import { channelStarter } from "./channel-starter.js";
import { MessengerRegistry } from "./messenger-registry.js";
import { slackAdapter } from "./slack-starter.js";
import { telegramAdapter } from "./telegram-starter.js";
import { WakeAccess } from "./wake-access.js";

/** A fresh assembly (its own Messenger registry, subscriptions, schedules and access rules): one per app. */
export function createAssembly(): AppAssembly {
  const messengers = new MessengerRegistry();
  const subscriptions = new AppSubscriptions();
  const schedules = new AppSchedules();
  const access = new WakeAccess();
  const parts = { messengers, subscriptions, schedules, access };
  const channels = [slackAdapter, telegramAdapter].map((adapter) => channelStarter(adapter, parts));
  return {
    createConversation: (context) => createConversation(context, { ...parts, platforms: channels }),
    channels,
  };
}

/** The assembly the CLI starts. */
export const defaultAssembly: AppAssembly = createAssembly();
