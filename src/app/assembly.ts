/**
 * The wiring point of `coworker start`. As modules land, they are added here and nowhere else:
 * `createConversation` builds the SessionManager (store, engine factory with provider and tools,
 * approvals config) and `channels` lists the Slack and Telegram ChannelStarters. Until a
 * conversation factory is set, `startApp` stops with a message saying so.
 */
import type { AppAssembly } from "./app-parts.js";

/** The assembly the CLI starts. */
export const defaultAssembly: AppAssembly = { channels: [] };
