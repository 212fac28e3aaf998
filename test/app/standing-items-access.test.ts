/**
 * A standing item runs only for someone still allowed where it runs, through the real assembly
 * (`coworker start`, Slack in Socket Mode on the fake, the model on the fake OpenAI server): Ana
 * sets a wake-up, her account is deactivated before it is due, and the wake-up is paused with a
 * note in its thread instead of running a turn as her. The same wake-up runs when she is not.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { FakeOpenAI } from "../fakes/fake-openai.js";
import { type FakeSlack, startFakeSlack } from "../fakes/fake-slack/index.js";
import { shown } from "../channels/slack/e2e-harness.js";
import { type Closers, lastMessage, startOnSlack, wakingModel } from "./standing-items-helpers.js";

const ANA = { id: "U1ANA", name: "ana", displayName: "Ana" };
const DM = "D1ANA";
const WOKEN = "Woken: checking the deploy.";

const closers: Closers = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** Ana asks for a wake-up in her DM; resolves with the thread's ts once the agent has set it. */
async function setWakeUp(slack: FakeSlack): Promise<string> {
  const { ts } = slack.userPosts({ user: ANA.id, channel: DM, text: "wake me in a few seconds" });
  await slack.waitFor(
    () => slack.state.botMessages(DM, ts).find((m) => shown(m).includes("I will wake you.")),
    "the agent's reply",
  );
  return ts;
}

async function fakes(): Promise<{ slack: FakeSlack; openai: FakeOpenAI }> {
  const slack = await startFakeSlack();
  closers.push(() => slack.close());
  slack.state.addUser(ANA);
  slack.state.addChannel({ id: DM, name: "dm-ana", type: "im", members: [ANA.id] });
  return { slack, openai: await wakingModel(closers, WOKEN) };
}

const wakeTurns = (openai: FakeOpenAI) =>
  openai.requests.filter((body) => String(lastMessage(body).content).startsWith("[Wake-up")).length;

describe("standing items and access", () => {
  it("a wake-up whose creator was deactivated is paused, with a note in its thread, and runs no turn", async () => {
    const { slack, openai } = await fakes();
    await startOnSlack(slack, openai, ANA.id, closers);
    const ts = await setWakeUp(slack);
    slack.state.addUser({ ...ANA, deactivated: true });
    const note = await slack.waitFor(
      () => slack.state.botMessages(DM, ts).find((m) => shown(m).includes("I paused the scheduled wake-up")),
      "the pause note",
    );
    expect(shown(note)).toMatch(
      /I paused the scheduled wake-up wak_\w+, which runs as the person who set it up: Ana \(id U1ANA\) may no longer use Coworker in this conversation\./,
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(wakeTurns(openai)).toBe(0);
  });

  it("the same wake-up runs while its creator is still allowed", async () => {
    const { slack, openai } = await fakes();
    await startOnSlack(slack, openai, ANA.id, closers);
    const ts = await setWakeUp(slack);
    await slack.waitFor(
      () => slack.state.botMessages(DM, ts).find((m) => shown(m).includes(WOKEN)),
      "the woken turn's answer",
    );
    expect(wakeTurns(openai)).toBe(1);
  });
});
