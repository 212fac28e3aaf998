import { afterEach, describe, expect, it } from "vitest";
import { createAssembly } from "../../src/app/assembly.js";
import { planChannels } from "../../src/app/channel-plan.js";
import { loadConfig } from "../../src/config/load-config.js";
import type { Env } from "../../src/config/env-overrides.js";
import { type FakeBody, type FakeOpenAI, startFakeOpenAI } from "../fakes/fake-openai.js";
import { type FakeSlack, startFakeSlack } from "../fakes/fake-slack/index.js";
import { type FakeTelegram, startFakeTelegram } from "../fakes/fake-telegram/fake-telegram.js";
import { ALICE, ALICE_DM } from "../channels/telegram/harness.js";
import { shown } from "../channels/slack/e2e-harness.js";
import { makeProject, startCoworker } from "./run-coworker.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const lastMessage = (body: FakeBody): FakeBody => body.messages.at(-1);

/** First a send_message call with `args`, then a text answer quoting the tool's result. */
async function modelThatSends(args: Record<string, string>): Promise<FakeOpenAI> {
  const fake = await startFakeOpenAI(({ body }) =>
    lastMessage(body).role === "tool"
      ? { text: `Done: ${lastMessage(body).content}` }
      : { toolCalls: [{ name: "send_message", arguments: JSON.stringify(args) }] },
  );
  closers.push(() => fake.close());
  return fake;
}

/** `coworker start` with `env` (platform credentials); logs silenced; resolves with the run. */
function start(env: Env, yaml = "") {
  return startCoworker(makeProject(`log:\n  level: silent\n${yaml}`), env);
}

function opsUrl(stderr: string): string {
  return /ops {7}(http:\/\/127\.0\.0\.1:\d+)/.exec(stderr)?.[1] ?? "";
}

async function readyChecks(url: string): Promise<string[]> {
  const report = (await (await fetch(`${url}/readyz`)).json()) as { checks: { name: string; ok: boolean }[] };
  return report.checks.map((check) => `${check.name}:${check.ok}`);
}

describe("channel starters", () => {
  it("are planned only with complete credentials", () => {
    const channels = createAssembly().channels;
    const plan = (env: Env) => {
      const loaded = loadConfig({ env: { OPENAI_API_KEY: "sk-test-0123456789abcdef", ...env }, cwd: "/tmp" });
      if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
      return planChannels(loaded.config, channels);
    };
    expect(channels.map((starter) => starter.platform)).toEqual(["slack", "telegram"]);
    expect(plan({})).toEqual(["console"]);
    expect(plan({ SLACK_BOT_TOKEN: "xoxb-1-2", SLACK_APP_TOKEN: "xapp-1-2" })).toEqual(["slack"]);
    expect(plan({ SLACK_BOT_TOKEN: "xoxb-1-2", SLACK_SIGNING_SECRET: "s3cr3t" })).toEqual(["slack"]);
    expect(plan({ TELEGRAM_BOT_TOKEN: "1:abc" })).toEqual(["telegram"]);
    expect(
      plan({ TELEGRAM_BOT_TOKEN: "1:abc", SLACK_BOT_TOKEN: "xoxb-1-2", SLACK_APP_TOKEN: "xapp-1-2" }),
    ).toEqual(["slack", "telegram"]);
  });

  it("coworker start runs Telegram: answers a DM, send_message reaches the chat, ready, SIGTERM exits 0", async () => {
    const tg: FakeTelegram = await startFakeTelegram();
    closers.push(() => tg.close());
    const openai = await modelThatSends({ channel: "current", text: "A heads-up for this chat." });
    const run = start({
      OPENAI_BASE_URL: openai.baseURL,
      TELEGRAM_BOT_TOKEN: tg.token,
      TELEGRAM_API_ROOT: tg.apiRoot,
      TELEGRAM_ALLOWED_USERS: String(ALICE.id),
    });
    await tg.waitFor(() => tg.callsOf("getUpdates").length > 0);
    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "tell me something" });
    const texts = await tg.waitFor(() => {
      const sent = tg.state.botMessages(ALICE.id).map((message) => message.text ?? "");
      return sent.some((text) => text.includes("Done:")) ? sent : undefined;
    });
    expect(texts).toContain("A heads-up for this chat.");
    expect(texts.find((text) => text.includes("Done:"))).toContain(
      `Done: Sent to Telegram chat ${ALICE.id}.`,
    );
    expect(run.t.stderr()).toContain("channels  telegram");
    const ops = opsUrl(run.t.stderr());
    expect(await readyChecks(ops)).toContain("channel:telegram:true");
    const metrics = await (await fetch(`${ops}/metrics`)).text();
    expect(metrics).toContain('coworker_tool_calls_total{tool="send_message",status="ok"} 1');

    run.signals.emit("SIGTERM");
    expect(await run.exited).toBe(0);
    expect(run.t.stdout()).toBe("");
  });

  it("coworker start runs Slack in Socket Mode: send_message finds #general through the directory", async () => {
    const slack: FakeSlack = await startFakeSlack();
    closers.push(() => slack.close());
    slack.state.addUser({ id: "U1ANA", name: "ana", displayName: "Ana" });
    slack.state.addChannel({ id: "D1ANA", name: "dm-ana", type: "im", members: ["U1ANA"] });
    slack.state.addChannel({ id: "C1GEN", name: "general", type: "channel", members: ["U1ANA"] });
    const openai = await modelThatSends({ channel: "#general", text: "Deploy is done." });
    const run = start(
      {
        OPENAI_BASE_URL: openai.baseURL,
        SLACK_BOT_TOKEN: slack.state.botToken,
        SLACK_APP_TOKEN: slack.state.appToken,
        SLACK_API_URL: slack.apiUrl,
      },
      "agent:\n  mode: auto\n",
    );
    await slack.waitFor(() => slack.socket.connections > 0 || undefined, "the socket connection");
    const { ts } = slack.userPosts({ user: "U1ANA", channel: "D1ANA", text: "announce the deploy" });
    const announced = await slack.waitFor(
      () => slack.state.botMessages("C1GEN").find((message) => message.text.includes("Deploy is done.")),
      "the post in #general",
    );
    expect(announced.threadTs).toBeUndefined();
    const reply = await slack.waitFor(
      () => slack.state.botMessages("D1ANA", ts).find((message) => /(^|\n)Done:/.test(shown(message))),
      "the DM reply",
    );
    expect(shown(reply)).toContain("#general");
    const ops = opsUrl(run.t.stderr());
    expect(run.t.stderr()).toContain("channels  slack");
    expect(await readyChecks(ops)).toContain("channel:slack:true");

    run.signals.emit("SIGTERM");
    expect(await run.exited).toBe(0);
  });
});
