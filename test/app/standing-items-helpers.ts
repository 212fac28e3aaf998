/**
 * Shared by the standing-items tests: a fake model that sets a wake-up and answers a wake-up's
 * turn, and `coworker start` on the fake Slack with one allowed user. What they start is stopped by
 * the test file's `closers`, last first.
 */
import type { Env } from "../../src/config/env-overrides.js";
import { type FakeBody, type FakeOpenAI, startFakeOpenAI } from "../fakes/fake-openai.js";
import type { FakeSlack } from "../fakes/fake-slack/index.js";
import { makeProject, startCoworker } from "./run-coworker.js";

/** What a test file closes after each test. */
export type Closers = (() => Promise<void>)[];

export const lastMessage = (body: FakeBody): FakeBody => body.messages.at(-1);

/** Sets a wake-up when asked, says so after the tool's result, and answers a wake-up's turn with `woken`. */
export async function wakingModel(closers: Closers, woken: string): Promise<FakeOpenAI> {
  const fake = await startFakeOpenAI(({ body }) => {
    const last = lastMessage(body);
    if (last.role === "tool") return { text: "I will wake you." };
    if (String(last.content).startsWith("[Wake-up")) return { text: woken };
    return { toolCalls: [{ name: "wake_me_later", arguments: '{"in_s":3,"note":"check the deploy"}' }] };
  });
  closers.push(() => fake.close());
  return fake;
}

/** `coworker start` on Slack with `allowedUser` the one allowed user; resolves once connected. */
export async function startOnSlack(
  slack: FakeSlack,
  openai: FakeOpenAI,
  allowedUser: string,
  closers: Closers,
) {
  const env: Env = {
    OPENAI_BASE_URL: openai.baseURL,
    SLACK_BOT_TOKEN: slack.state.botToken,
    SLACK_APP_TOKEN: slack.state.appToken,
    SLACK_API_URL: slack.apiUrl,
  };
  const run = startCoworker(
    // A wake-up may be set 3 s ahead here (the default minimum is a minute).
    makeProject(
      `log:\n  level: silent\nslack:\n  allowed_users: [${allowedUser}]\nschedules:\n  min_wake_s: 1\n`,
    ),
    env,
  );
  closers.push(async () => {
    run.signals.emit("SIGTERM");
    await run.exited;
  });
  await slack.waitFor(() => slack.socket.connections > 0 || undefined, "the socket connection");
  return run;
}
