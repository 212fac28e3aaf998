/**
 * End-to-end set-up for the Slack channel: the real Bolt app (SlackChannel, Socket Mode) against
 * the fake Slack, the real SessionManager on a SQLite store, and TurnEngines whose provider is
 * the real OpenAI-compatible client talking to the fake OpenAI server. `restart` builds a new
 * SessionManager and SlackChannel on the same store file, as a new process would. The stack
 * itself is the shared builder's (test/support/session-stack.ts); an optional extension adds to
 * every "process" (another engine, manager and channel options, start/stop steps) — e.g. channel
 * subscriptions.
 */
import { mkdtempSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SlackChannel, type SlackChannelOptions } from "../../../src/channels/slack/slack-channel.js";
import type { RenderSettings } from "../../../src/channels/slack/slack-renderer.js";
import { OpenAIProvider } from "../../../src/engine/provider/openai-provider.js";
import type { SessionManager } from "../../../src/sessions/session-manager.js";
import type { Store } from "../../../src/store/store.js";
import { type FakeHandler, type FakeOpenAI, startFakeOpenAI } from "../../fakes/fake-openai.js";
import { type FakeMessage, type FakeSlack, startFakeSlack } from "../../fakes/fake-slack/index.js";
import { ToolRuns } from "../../sessions/helpers/test-tools.js";
import { openStack, type StackExtension, type StackExtras, stopStack } from "../../support/session-stack.js";
import { blockTexts, fakeSlackChannelOptions, silentLogger } from "./support.js";
import { withOutputs } from "../../support/adapter-outputs.js";

export const ANA = "U1ANA";
export const BEN = "U2BEN";
export const BOSS = "U9BOSS";
export const DM = "D1ANA";
export const GENERAL = "C1GEN";
export const MENTION = "<@U0BOT>";

export interface Process {
  readonly store: Store;
  readonly manager: SessionManager;
  readonly channel: SlackChannel;
  readonly extras: ProcessExtras;
}

/** What an extension adds to one "process" (built again for each restart). */
export type ProcessExtras = StackExtras<SlackChannel, Partial<SlackChannelOptions>>;

/** Builds a process's extras from its store, the provider on the fake model and the data dir. */
export type ProcessExtension = StackExtension<SlackChannel, Partial<SlackChannelOptions>>;

export interface E2E {
  readonly fake: FakeSlack;
  readonly openai: FakeOpenAI;
  readonly runs: ToolRuns;
  readonly dataDir: string;
  current: Process;
  /** Stop this "process" and start a new one on the same store file. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

async function startProcess(
  fake: FakeSlack,
  openai: FakeOpenAI,
  runs: ToolRuns,
  dataDir: string,
  render: Partial<RenderSettings>,
  extend: ProcessExtension | undefined,
): Promise<Process> {
  const { store, manager, extras } = await openStack({
    provider: new OpenAIProvider({ baseURL: openai.baseURL, apiKey: "test", maxRetries: 0 }),
    dataDir,
    workspaceRoot: dataDir,
    openai,
    runs,
    approvers: [`slack:${BOSS}`],
    maxSessionsInMemory: 100,
    logger: silentLogger,
    extend,
  });
  const channel = withOutputs(
    new SlackChannel(
      fakeSlackChannelOptions(fake, {
        fileMaxBytes: 1_000_000,
        workspaceRoot: dataDir,
        service: manager,
        render: { editIntervalMs: 50, streamIntervalMs: 50, ...render },
        ...extras.channel,
      }),
    ),
    manager,
  );
  await channel.start();
  const running: Process = { store, manager, channel, extras };
  await extras.started?.(running);
  await manager.start();
  return running;
}

async function stopProcess(process: Process): Promise<void> {
  await stopStack({ ...process, stopping: process.extras.stopping }, 0);
}

/** Start the fakes and a first "process" (`extend` adds to it and to every restarted one). */
export async function startE2E(
  handler: FakeHandler,
  render: Partial<RenderSettings> = {},
  extend?: ProcessExtension,
): Promise<E2E> {
  const fake = await startFakeSlack({ pingIntervalMs: 1_000 });
  fake.state.addUser({ id: ANA, name: "ana", displayName: "Ana" });
  fake.state.addUser({ id: BEN, name: "ben", displayName: "Ben" });
  fake.state.addUser({ id: BOSS, name: "boss", displayName: "Boss" });
  fake.state.addChannel({ id: DM, name: "dm-ana", type: "im", members: [ANA] });
  fake.state.addChannel({ id: GENERAL, name: "general", type: "channel", members: [ANA, BEN, BOSS] });
  const openai = await startFakeOpenAI(handler);
  const runs = new ToolRuns();
  const dataDir = mkdtempSync(join(tmpdir(), "slack-e2e-"));
  const e2e: E2E = {
    fake,
    openai,
    runs,
    dataDir,
    current: await startProcess(fake, openai, runs, dataDir, render, extend),
    async restart() {
      await stopProcess(e2e.current);
      e2e.current = await startProcess(fake, openai, runs, dataDir, render, extend);
    },
    async close() {
      await stopProcess(e2e.current);
      await openai.close();
      await fake.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return e2e;
}

/** What a bot message shows: its streamed markdown, else its blocks' text, else its text. */
export function shown(message: FakeMessage): string {
  if (message.streamed && message.blocks.length === 0) return message.markdown;
  const texts = blockTexts(message.blocks);
  return texts.length > 0 ? texts.join("\n") : message.text;
}

/** The bot's messages in a thread, as shown. */
export function thread(fake: FakeSlack, channel: string, ts: string): string[] {
  return fake.state.botMessages(channel, ts).map(shown);
}

/** The newest bot message in the thread whose blocks hold a button with this label. */
export function messageWithButton(
  fake: FakeSlack,
  channel: string,
  ts: string,
  label: string,
): FakeMessage | undefined {
  return fake.state
    .botMessages(channel, ts)
    .filter((m) => buttonId(m, label) !== undefined)
    .at(-1);
}

/** The action id of the button with this label. */
export function buttonId(message: FakeMessage, label: string): string | undefined {
  for (const block of message.blocks as {
    type: string;
    elements?: { action_id: string; text?: { text: string } }[];
  }[]) {
    if (block.type !== "actions") continue;
    const found = block.elements?.find((e) => e.text?.text === label);
    if (found) return found.action_id;
  }
  return undefined;
}

/** The user texts of the model request at `index` (what the model was shown). */
export function userTexts(openai: FakeOpenAI, index: number): string[] {
  const messages = (openai.requests[index]?.messages ?? []) as { role: string; content: unknown }[];
  return messages
    .filter((m) => m.role === "user")
    .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
}
