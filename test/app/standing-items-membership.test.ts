/**
 * A standing item stops when its creator leaves the conversation it runs in, through the real
 * assembly (`coworker start`, Slack in Socket Mode on the fake, the model on the fake OpenAI
 * server): Ana sets a wake-up in #general, is removed from #general before it is due, and the
 * wake-up is paused with a note in its thread instead of running a turn as her there.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Env } from "../../src/config/env-overrides.js";
import { type FakeBody, type FakeOpenAI, startFakeOpenAI } from "../fakes/fake-openai.js";
import { startFakeSlack } from "../fakes/fake-slack/index.js";
import { shown } from "../channels/slack/e2e-harness.js";
import { makeProject, startCoworker } from "./run-coworker.js";

const ANA = { id: "U1ANA", name: "ana", displayName: "Ana" };
const GENERAL = "C1GEN";

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
    if (String(last.content).startsWith("[Wake-up")) return { text: "Woken." };
    return { toolCalls: [{ name: "wake_me_later", arguments: '{"in_s":3,"note":"check the deploy"}' }] };
  });
  closers.push(() => fake.close());
  return fake;
}

describe("standing items and membership", () => {
  it("a wake-up whose creator was removed from its channel is paused, with a note in its thread, and runs no turn", async () => {
    const slack = await startFakeSlack();
    closers.push(() => slack.close());
    slack.state.addUser(ANA);
    slack.state.addChannel({ id: GENERAL, name: "general", type: "channel", members: [ANA.id] });
    const openai = await wakingModel();
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

    const { ts } = slack.userPosts({
      user: ANA.id,
      channel: GENERAL,
      text: `<@${slack.state.botUserId}> wake me in a few seconds`,
    });
    await slack.waitFor(
      () => slack.state.botMessages(GENERAL, ts).find((m) => shown(m).includes("I will wake you.")),
      "the agent's reply",
    );
    slack.state.channels.get(GENERAL)?.members.delete(ANA.id);
    const note = await slack.waitFor(
      () =>
        slack.state.botMessages(GENERAL, ts).find((m) => shown(m).includes("I paused the scheduled wake-up")),
      "the pause note",
    );
    expect(shown(note)).toMatch(
      /I paused the scheduled wake-up wak_\w+, which runs as the person who set it up: Ana may no longer use Coworker in this conversation\./,
    );
    // The refusal comes before the wake: no turn ran as Ana.
    expect(
      openai.requests.filter((body) => String(lastMessage(body).content).startsWith("[Wake-up")),
    ).toHaveLength(0);
  });
});
