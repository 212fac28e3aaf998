/**
 * A standing item runs only for someone still allowed where it runs, through the real assembly
 * (`coworker start`, Slack in Socket Mode on the fake, the model on the fake OpenAI server): Ana
 * sets a wake-up, her account is deactivated before it is due, and the wake-up is paused with a
 * note in its thread instead of running a turn as her. The same wake-up runs when she is not.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Env } from "../../src/config/env-overrides.js";
import { type FakeBody, type FakeOpenAI, startFakeOpenAI } from "../fakes/fake-openai.js";
import { type FakeSlack, startFakeSlack } from "../fakes/fake-slack/index.js";
import { shown } from "../channels/slack/e2e-harness.js";
import { makeProject, startCoworker } from "./run-coworker.js";

const ANA = { id: "U1ANA", name: "ana", displayName: "Ana" };
const DM = "D1ANA";
const WOKEN = "Woken: checking the deploy.";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const lastMessage = (body: FakeBody): FakeBody => body.messages.at(-1);

/** Sets a wake-up when asked, says so after the tool's result, and answers a wake-up's turn. */
async function wakingModel(): Promise<FakeOpenAI> {
  const fake = await startFakeOpenAI(({ body }) => {
    const last = lastMessage(body);
    if (last.role === "tool") return { text: "I will wake you." };
    if (String(last.content).startsWith("[Wake-up")) return { text: WOKEN };
    return { toolCalls: [{ name: "wake_me_later", arguments: '{"in_s":3,"note":"check the deploy"}' }] };
  });
  closers.push(() => fake.close());
  return fake;
}

/** `coworker start` on Slack with Ana the one allowed user; resolves once connected. */
async function start(slack: FakeSlack, openai: FakeOpenAI) {
  const env: Env = {
    OPENAI_BASE_URL: openai.baseURL,
    SLACK_BOT_TOKEN: slack.state.botToken,
    SLACK_APP_TOKEN: slack.state.appToken,
    SLACK_API_URL: slack.apiUrl,
  };
  const run = startCoworker(
    makeProject(`log:\n  level: silent\nslack:\n  allowed_users: [${ANA.id}]\n`),
    env,
  );
  closers.push(async () => {
    run.signals.emit("SIGTERM");
    await run.exited;
  });
  await slack.waitFor(() => slack.socket.connections > 0 || undefined, "the socket connection");
  return run;
}

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
  return { slack, openai: await wakingModel() };
}

const wakeTurns = (openai: FakeOpenAI) =>
  openai.requests.filter((body) => String(lastMessage(body).content).startsWith("[Wake-up")).length;

describe("standing items and access", () => {
  it("a wake-up whose creator was deactivated is paused, with a note in its thread, and runs no turn", async () => {
    const { slack, openai } = await fakes();
    await start(slack, openai);
    const ts = await setWakeUp(slack);
    slack.state.addUser({ ...ANA, deactivated: true });
    const note = await slack.waitFor(
      () => slack.state.botMessages(DM, ts).find((m) => shown(m).includes("I paused the scheduled wake-up")),
      "the pause note",
    );
    expect(shown(note)).toMatch(
      /I paused the scheduled wake-up wak_\w+, which runs as the person who set it up: Ana may no longer use Coworker in this conversation\./,
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(wakeTurns(openai)).toBe(0);
  });

  it("the same wake-up runs while its creator is still allowed", async () => {
    const { slack, openai } = await fakes();
    await start(slack, openai);
    const ts = await setWakeUp(slack);
    await slack.waitFor(
      () => slack.state.botMessages(DM, ts).find((m) => shown(m).includes(WOKEN)),
      "the woken turn's answer",
    );
    expect(wakeTurns(openai)).toBe(1);
  });
});
