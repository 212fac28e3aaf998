/**
 * Shared set-up for the Slack channel tests: a silent logger, SlackChannel options and clients
 * pointed at a fake Slack,
 * a ThreadOutput factory with fast render settings, and event builders.
 */
import pino from "pino";
import { z } from "zod";
import { type AgentEvent, agentEvent } from "../../../src/core/events.js";
import type { ThreadTarget } from "../../../src/core/thread-target.js";
import { createClients, type SlackClients } from "../../../src/channels/slack/slack-api.js";
import { CapabilityLatch } from "../../../src/channels/slack/slack-capabilities.js";
import type { SlackChannelOptions } from "../../../src/channels/slack/slack-channel.js";
import { DEFAULT_RENDER_SETTINGS, type RenderSettings } from "../../../src/channels/slack/slack-renderer.js";
import { SlackThreadOutput } from "../../../src/channels/slack/slack-thread-output.js";
import { LatestThreads } from "../../../src/channels/slack/slack-latest-threads.js";
import { ThreadRegistry } from "../../../src/channels/slack/slack-threads.js";
import { type FakeSlack, startFakeSlack } from "../../fakes/fake-slack/index.js";
import { OPEN_UPLOADS } from "../../support/test-upload-gate.js";

export const silentLogger = pino({ level: "silent" });

/** What a test must give a SlackChannel on the fake Slack; anything else it gives overrides the defaults. */
export type FakeSlackChannelSetup = Pick<SlackChannelOptions, "service" | "workspaceRoot" | "fileMaxBytes"> &
  Partial<SlackChannelOptions>;

/**
 * What a client needs to reach a fake Slack: its Web API root and the app's tokens. A FakeSlack is
 * one; `fakeSlackAddress` copies one out for a client in another process, which checks it with the schema.
 */
export const fakeSlackAddressSchema = z.object({
  apiUrl: z.string().url(),
  state: z.object({ botToken: z.string(), appToken: z.string(), botUserId: z.string() }),
});
export type FakeSlackAddress = z.infer<typeof fakeSlackAddressSchema>;

/** The address of `fake`, as plain data. */
export function fakeSlackAddress(fake: FakeSlack): FakeSlackAddress {
  const { botToken, appToken, botUserId } = fake.state;
  return { apiUrl: fake.apiUrl, state: { botToken, appToken, botUserId } };
}

/**
 * SlackChannel options on the fake Slack in Socket Mode: no allow-lists, no mention needed in
 * threads, a silent logger — with `setup` over them.
 */
export function fakeSlackChannelOptions(
  fake: FakeSlackAddress,
  setup: FakeSlackChannelSetup,
): SlackChannelOptions {
  return {
    botToken: fake.state.botToken,
    appToken: fake.state.appToken,
    apiUrl: fake.apiUrl,
    requireMentionInThreads: false,
    allowedUsers: [],
    allowedChannels: [],
    allowedBots: [],
    logger: silentLogger,
    uploads: OPEN_UPLOADS,
    ...setup,
  };
}

/**
 * A fake Slack (pinging every 100 ms) with Ana (U1) and Bo (U2), Ana's DM D1 and #general (C1)
 * with both in it.
 */
export async function startFakeSlackWithAnaAndBo(): Promise<FakeSlack> {
  const fake = await startFakeSlack({ pingIntervalMs: 100 });
  fake.state.addUser({ id: "U1", name: "ana", displayName: "Ana" });
  fake.state.addUser({ id: "U2", name: "bo" });
  fake.state.addChannel({ id: "D1", name: "dm", type: "im", members: ["U1"] });
  fake.state.addChannel({ id: "C1", name: "general", type: "channel", members: ["U1", "U2"] });
  return fake;
}

export function clientsFor(fake: FakeSlack): SlackClients {
  return createClients({ token: fake.state.botToken, slackApiUrl: fake.apiUrl, logger: silentLogger });
}

export interface OutputHarness {
  readonly output: SlackThreadOutput;
  readonly capabilities: CapabilityLatch;
  readonly stops: { target: ThreadTarget; userId: string }[];
  readonly threads: ThreadRegistry;
}

/** A thread registry as one process keeps it (latest threads in memory), with no session layer behind it. */
export function threadRegistry(): ThreadRegistry {
  return new ThreadRegistry({}, new LatestThreads({ workspace: () => "T1", logger: silentLogger }));
}

export function outputFor(
  fake: FakeSlack,
  target: ThreadTarget,
  settings: Partial<RenderSettings> = {},
  capabilities = new CapabilityLatch(),
): OutputHarness {
  const stops: { target: ThreadTarget; userId: string }[] = [];
  const threads = threadRegistry();
  const output = new SlackThreadOutput(
    {
      clients: clientsFor(fake),
      capabilities,
      threads,
      logger: silentLogger,
      settings: {
        ...DEFAULT_RENDER_SETTINGS,
        editIntervalMs: 20,
        streamIntervalMs: 20,
        firstFlushMs: 0,
        statusDelayMs: 0,
        ...settings,
      },
      stopTurn: (t, userId) => stops.push({ target: t, userId }),
    },
    target,
  );
  return { output, capabilities, stops, threads };
}

export const ev = {
  text: (delta: string): AgentEvent => agentEvent({ type: "text-delta", delta }),
  done: (content: string, step = 1, toolCalls = 0): AgentEvent =>
    agentEvent({ type: "assistant-message-done", content, step, toolCalls }),
  toolStart: (callId: string, preview: string, name = "run_command"): AgentEvent =>
    agentEvent({ type: "tool-call-started", callId, name, args: {}, preview }),
  toolEnd: (
    callId: string,
    status: "ok" | "error" | "denied" = "ok",
    durationMs = 3_200,
    name = "run_command",
  ): AgentEvent =>
    agentEvent({
      type: "tool-call-finished",
      callId,
      name,
      status,
      outputPreview: "",
      files: [],
      durationMs,
    }),
  completed: (
    finalText = "",
    status: "completed" | "interrupted" | "error" | "max_iterations" = "completed",
  ): AgentEvent => agentEvent({ type: "turn-completed", status, iterations: 1, finalText, usage: undefined }),
  error: (message: string, recoverable = false): AgentEvent =>
    agentEvent({ type: "error", message, recoverable }),
};

/** The mrkdwn texts of a message's section and context blocks, in order. */
export function blockTexts(blocks: unknown[]): string[] {
  const out: string[] = [];
  for (const block of blocks as { type: string; text?: { text: string }; elements?: { text?: string }[] }[]) {
    if (block.type === "section" && block.text) out.push(block.text.text);
    if (block.type === "context") for (const e of block.elements ?? []) if (e.text) out.push(e.text);
  }
  return out;
}

/** The action ids of a message's buttons. */
export function actionIds(blocks: unknown[]): string[] {
  return (blocks as { type: string; elements?: { action_id?: string }[] }[])
    .filter((b) => b.type === "actions")
    .flatMap((b) => (b.elements ?? []).map((e) => e.action_id ?? ""));
}
