/**
 * Support for the subscriptions end-to-end tests: the app's subscription wiring (AppSubscriptions
 * with the real engine factory, the SessionManager as wake sink, the platform directory from the
 * started channel) as an extension of the Slack and Telegram harnesses, short wake-up timing, and
 * a puppet model: a person's message "CALL <tool> <json>" makes it call that tool, a tool result
 * is answered with "Tool said: …", and a wake-up is answered as the test decides.
 */
import pino from "pino";
import { AppSubscriptions } from "../../src/app/app-subscriptions.js";
import { createEngineFactory } from "../../src/app/engine-factory.js";
import type { ChannelHooks } from "../../src/channels/channel-adapter.js";
import type { PlatformDirectory } from "../../src/subscriptions/platform-directory.js";
import { storeSlotBudget } from "../../src/store/slot-budget.js";
import {
  DEFAULT_SUBSCRIPTION_SETTINGS,
  type SubscriptionSettings,
} from "../../src/subscriptions/subscription-settings.js";
import type { ProcessExtension } from "../channels/slack/e2e-harness.js";
import type { StackExtension } from "../channels/telegram/stack.js";
import type { FakeBody, FakeHandler, FakeOpenAI, FakeReply } from "../fakes/fake-openai.js";
import type { StackExtension as SharedStackExtension } from "../support/session-stack.js";

/** Wake-ups 250 ms after the last matching message (a burst posted at once is one batch). */
export const TEST_SETTINGS: SubscriptionSettings = Object.freeze({
  ...DEFAULT_SUBSCRIPTION_SETTINGS,
  debounceMs: 250,
  maxWaitMs: 10_000,
  wakesPerHour: 100,
});

/** How every wake-up prompt starts (see src/subscriptions/wake-prompt.ts). */
export const WAKE_PREFIX = "Messages from ";

const silent = pino({ level: "silent" });

/** A stack with the app's channel subscriptions (built again for every restart). */
function withSubscriptions<C extends { directory(): PlatformDirectory }>(
  settings: SubscriptionSettings,
): SharedStackExtension<C, ChannelHooks> {
  return ({ store, provider, workspaceRoot }) => {
    const subscriptions = new AppSubscriptions();
    return {
      createEngine: createEngineFactory({ provider, workspaceRoot, extraTools: () => subscriptions.tools }),
      manager: subscriptions.sessionOptions(),
      channel: subscriptions.channelHooks,
      started: async ({ manager, channel }) => {
        await subscriptions.open({
          store,
          sessions: manager,
          settings,
          approvers: [],
          logger: silent,
          budget: storeSlotBudget(store.space("budgets")),
        });
        subscriptions.registerDirectory(channel.directory());
      },
      stopping: () => subscriptions.shutdown(),
    };
  };
}

/** The Slack harness with the app's channel subscriptions. */
export function slackSubscriptions(settings: SubscriptionSettings = TEST_SETTINGS): ProcessExtension {
  return withSubscriptions(settings);
}

/** The Telegram stack with the app's channel subscriptions. */
export function telegramSubscriptions(settings: SubscriptionSettings = TEST_SETTINGS): StackExtension {
  return withSubscriptions(settings);
}

function text(content: unknown): string {
  return typeof content === "string" ? content : JSON.stringify(content);
}

function lastMessage(body: FakeBody): { role: string; content: string } {
  const last = body.messages.at(-1);
  return { role: last.role, content: text(last.content) };
}

/** The model the tests script: tools on request, "Tool said: …" after a tool, wake-ups by `onWake`. */
export class PuppetModel {
  /** The reply to a wake-up (its prompt is `content`); by default a short acknowledgement. */
  onWake: (content: string) => FakeReply = (content) => ({
    text: `Woken: ${(content.match(/^\[/gm) ?? []).length} new messages noted.`,
  });

  readonly handler: FakeHandler = ({ body }) => {
    const last = lastMessage(body);
    if (last.role === "tool") return { text: `Tool said: ${last.content.split("\n<context>")[0]}` };
    if (last.content.startsWith(WAKE_PREFIX)) return this.onWake(last.content);
    const call = /^CALL (\w+) (\{.*?\})\s*(?:\n|$)/.exec(last.content);
    if (call) return { toolCalls: [{ name: call[1]!, arguments: call[2]! }] };
    return { text: `You said: ${last.content.split("\n")[0]}` };
  };
}

/** The prompts of the wake-ups the model was given, oldest first (one per wake-up). */
export function wakePrompts(openai: FakeOpenAI): string[] {
  return openai.requests
    .map((body: FakeBody) => lastMessage(body))
    .filter((last) => last.role === "user" && last.content.startsWith(WAKE_PREFIX))
    .map((last) => last.content);
}

/** A person's request that makes the puppet call `tool` with `args`. */
export function call(tool: string, args: Record<string, unknown>): string {
  return `CALL ${tool} ${JSON.stringify(args)}`;
}
