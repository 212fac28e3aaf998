/**
 * Intake benchmark: what screening inbound payloads costs. (1) The pure screens — Slack bodies and
 * Telegram updates, well formed and generated garbage — in microseconds per payload. (2) End to
 * end on the real Bolt app (SlackChannel in Socket Mode on the fake Slack): ack latency of a
 * well-formed event versus a malformed frame the guard acks itself, p50 / p99 in ms.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import fc from "fast-check";
import { SlackChannel } from "../src/channels/slack/slack-channel.js";
import { screenSlackBody } from "../src/channels/slack/slack-intake.js";
import { screenUpdate } from "../src/channels/telegram/telegram-intake.js";
import { FakeService } from "../test/channels/slack/fake-service.js";
import { fakeSlackChannelOptions } from "../test/channels/slack/support.js";
import { startFakeSlack } from "../test/fakes/fake-slack/index.js";
import { slackBody, slackTemplates, telegramTemplates, telegramUpdate } from "../test/support/intake-fuzz.js";
import { hostLine, percentile, round1, writeResults } from "./support/report.js";

const SCREEN_SAMPLES = 20_000;
const FRAMES = 2_000;
const SEED = 20261201;

/** Mean microseconds per call of `screen` over `inputs` (after one warm-up pass). */
function microsPer(inputs: readonly unknown[], screen: (input: unknown) => unknown): number {
  for (const input of inputs) screen(input);
  const started = performance.now();
  for (const input of inputs) screen(input);
  return Number((((performance.now() - started) * 1000) / inputs.length).toFixed(2));
}

function screens() {
  const home = { teamId: "T0FAKE" };
  const slack = (body: unknown) => screenSlackBody(body, home, { allowExternal: false });
  const valid = slackTemplates("T0FAKE", "D1ANA");
  const tg = telegramTemplates(6666, 1001);
  const repeat = <T>(value: T) => Array.from({ length: SCREEN_SAMPLES }, () => value);
  return {
    slackEventUs: microsPer(repeat(valid.event), slack),
    slackPressUs: microsPer(repeat(valid.actions), slack),
    slackGarbageUs: microsPer(
      fc.sample(slackBody("T0FAKE", "D1ANA"), { numRuns: SCREEN_SAMPLES, seed: SEED }),
      slack,
    ),
    telegramMessageUs: microsPer(repeat({ update_id: 1, ...tg.message }), screenUpdate),
    telegramGarbageUs: microsPer(
      fc.sample(telegramUpdate(6666, 1001), { numRuns: SCREEN_SAMPLES, seed: SEED }).map((body, i) => ({
        update_id: i,
        ...body,
      })),
      screenUpdate,
    ),
  };
}

async function ackLatencies() {
  const fake = await startFakeSlack();
  fake.state.addUser({ id: "U7FUZZ", name: "fuzz", displayName: "Fuzz" });
  fake.state.addChannel({ id: "D7FUZZ", name: "dm-fuzz", type: "im", members: ["U7FUZZ"] });
  const dir = await mkdtemp(path.join(os.tmpdir(), "coworker-intake-bench-"));
  const channel = new SlackChannel(
    fakeSlackChannelOptions(fake, {
      service: new FakeService(),
      workspaceRoot: dir,
      fileMaxBytes: 1_000_000,
      allowedUsers: ["U0NOBODY"],
    }),
  );
  await channel.start();
  await fake.waitFor(() => fake.socket.open > 0 || undefined, "the socket");
  try {
    const measure = async (send: (i: number) => Promise<number>) => {
      const latencies: number[] = [];
      for (let i = 0; i < FRAMES; i++) latencies.push(await send(i));
      latencies.sort((a, b) => a - b);
      return { p50Ms: round1(percentile(latencies, 50)), p99Ms: round1(percentile(latencies, 99)) };
    };
    const event = (i: number) =>
      fake.sendEvent({
        type: "message",
        channel: "D7FUZZ",
        channel_type: "im",
        user: "U7FUZZ",
        text: `hello ${i}`,
        ts: `1700000000.${String(i).padStart(6, "0")}`,
        team: fake.state.teamId,
      }).acked;
    const garbage = (i: number) => {
      const id = `garbage-${i}`;
      const text = JSON.stringify({
        envelope_id: id,
        type: "events_api",
        payload: { type: "event_callback" },
      });
      return fake.socket.sendRaw(text, id) ?? Promise.resolve(0);
    };
    return { wellFormedEvent: await measure(event), malformedFrame: await measure(garbage) };
  } finally {
    await channel.stop();
    await fake.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Run the benchmark; writes bench/results/intake.{json,md}. */
export async function run(): Promise<Record<string, unknown>> {
  const generatedAt = new Date().toISOString();
  const screen = screens();
  const acks = await ackLatencies();
  const results = {
    generatedAt,
    node: process.version,
    samples: SCREEN_SAMPLES,
    frames: FRAMES,
    screen,
    acks,
  };
  const markdown = [
    "# Intake screening",
    "",
    hostLine(generatedAt),
    "",
    `Pure screens, mean µs per payload over ${SCREEN_SAMPLES} payloads (garbage: fast-check samples, seed ${SEED}):`,
    "",
    "| payload | µs |",
    "|---|---|",
    `| Slack message event | ${screen.slackEventUs} |`,
    `| Slack block_actions | ${screen.slackPressUs} |`,
    `| Slack generated garbage | ${screen.slackGarbageUs} |`,
    `| Telegram message update | ${screen.telegramMessageUs} |`,
    `| Telegram generated garbage | ${screen.telegramGarbageUs} |`,
    "",
    `Socket Mode ack latency on the real Bolt app and the fake Slack, ${FRAMES} frames each, one at a time:`,
    "",
    "| frame | p50 ms | p99 ms |",
    "|---|---|---|",
    `| well-formed message event (Bolt acks) | ${acks.wellFormedEvent.p50Ms} | ${acks.wellFormedEvent.p99Ms} |`,
    `| events_api without event (the guard acks) | ${acks.malformedFrame.p50Ms} | ${acks.malformedFrame.p99Ms} |`,
    "",
  ].join("\n");
  await writeResults("intake", results, markdown);
  return results;
}
