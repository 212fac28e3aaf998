import { afterEach, describe, expect, it } from "vitest";
import type { FakeBody } from "../fakes/fake-openai.js";
import { startFakeOpenAI } from "../fakes/fake-openai.js";
import { type FakeSlack, startFakeSlack } from "../fakes/fake-slack/index.js";
import { type FakeTelegram, startFakeTelegram } from "../fakes/fake-telegram/fake-telegram.js";
import { buttonId, shown } from "../channels/slack/e2e-harness.js";
import { ALICE, ALICE_DM, BOB, GROUP } from "../channels/telegram/harness.js";
import { makeProject, type Project, startCoworker } from "../app/run-coworker.js";
import { call, PuppetModel, wakePrompts } from "./e2e-support.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** `coworker start` on `project` with `env`; resolves once it has exited after SIGTERM via `stop`. */
function coworker(project: Project, env: Record<string, string>) {
  const { signals, exited } = startCoworker(project, env);
  return {
    stop: async () => {
      signals.emit("SIGTERM");
      return exited;
    },
  };
}

function slackReply(slack: FakeSlack, channel: string, ts: string, text: string, after = 0) {
  return slack.waitFor(
    () =>
      slack.state
        .botMessages(channel, ts)
        .slice(after)
        .map(shown)
        .find((t) => t.includes(text)),
    `"${text}" in the thread`,
  );
}

function telegramReply(tg: FakeTelegram, text: string, after = 0) {
  return tg.waitFor(() =>
    tg.state
      .botMessages(ALICE.id)
      .slice(after)
      .map((m) => m.text)
      .find((t) => t.includes(text)),
  );
}

describe("subscriptions under coworker start", () => {
  it("Slack and Telegram conversations subscribe, are woken, and keep their subscriptions over a restart", async () => {
    const model = new PuppetModel();
    const openai = await startFakeOpenAI(model.handler);
    const slack = await startFakeSlack();
    const tg = await startFakeTelegram();
    closers.push(
      () => openai.close(),
      () => slack.close(),
      () => tg.close(),
    );
    slack.state.addUser({ id: "U1ANA", name: "ana", displayName: "Ana" });
    slack.state.addUser({ id: "U2BEN", name: "ben", displayName: "Ben" });
    slack.state.addChannel({ id: "D1ANA", name: "dm-ana", type: "im", members: ["U1ANA"] });
    slack.state.addChannel({ id: "C2DEP", name: "deploys", type: "channel", members: ["U1ANA", "U2BEN"] });
    tg.state.chat(GROUP);
    tg.state.setMember(GROUP.id, tg.bot.id, "administrator");
    tg.state.setMember(GROUP.id, ALICE.id, "member");
    tg.state.setMember(GROUP.id, BOB.id, "member");
    const project = makeProject("log:\n  level: silent\nsubscriptions:\n  debounce_s: 0.2\n");
    const env = {
      OPENAI_BASE_URL: openai.baseURL,
      SLACK_BOT_TOKEN: slack.state.botToken,
      SLACK_APP_TOKEN: slack.state.appToken,
      SLACK_API_URL: slack.apiUrl,
      TELEGRAM_BOT_TOKEN: tg.token,
      TELEGRAM_API_ROOT: tg.apiRoot,
      TELEGRAM_ALLOWED_USERS: String(ALICE.id),
    };

    let app = coworker(project, env);
    await slack.waitFor(() => slack.socket.connections > 0 || undefined, "the socket connection");
    await tg.waitFor(() => tg.callsOf("getUpdates").length > 0);
    const home = slack.userPosts({
      user: "U1ANA",
      channel: "D1ANA",
      text: call("subscribe_channel", { channel: "#deploys" }),
    }).ts;
    const slackCard = await slack.waitFor(
      () => slack.state.botMessages("D1ANA", home).find((m) => buttonId(m, "Approve") !== undefined),
      "the approval card",
    );
    slack.pressButton({
      user: "U1ANA",
      channel: "D1ANA",
      messageTs: slackCard.ts,
      actionId: buttonId(slackCard, "Approve")!,
    });
    expect(await slackReply(slack, "D1ANA", home, "Tool said:")).toContain("Subscribed to #deploys");
    tg.sendUserMessage({
      chat: ALICE_DM,
      from: ALICE,
      text: call("subscribe_channel", { channel: String(GROUP.id) }),
    });
    const tgCard = await tg.waitFor(() =>
      tg.state
        .botMessages(ALICE.id)
        .find((m) => m.reply_markup?.inline_keyboard.flat().some((b) => b.text === "Approve")),
    );
    tg.pressButton({
      chat: ALICE_DM,
      from: ALICE,
      messageId: tgCard.message_id,
      data: tg.buttonData(tgCard, "Approve"),
    });
    expect(await telegramReply(tg, "Tool said:")).toContain("Subscribed to Team");
    const offered = openai.requests[0].tools.map((tool: FakeBody) => tool.function.name);
    expect(offered).toEqual(expect.arrayContaining(["subscribe_channel", "catch_up"]));

    slack.userPosts({ user: "U2BEN", channel: "C2DEP", text: "deploy 9 failed" });
    tg.sendUserMessage({ chat: GROUP, from: BOB, text: "the pager went off" });
    await slackReply(slack, "D1ANA", home, "Woken: 1 new messages");
    await telegramReply(tg, "Woken: 1 new messages");
    expect(await app.stop()).toBe(0);

    app = coworker(project, env);
    await slack.waitFor(() => slack.socket.connections > 1 || undefined, "the second socket connection");
    const seen = slack.state.botMessages("D1ANA", home).length;
    slack.userPosts({ user: "U1ANA", channel: "D1ANA", text: "status", threadTs: home });
    expect(await slackReply(slack, "D1ANA", home, "Subscriptions (1):", seen)).toContain("#deploys");
    slack.userPosts({ user: "U2BEN", channel: "C2DEP", text: "deploy 10 failed too" });
    await slackReply(slack, "D1ANA", home, "Woken:", seen);
    const prompts = wakePrompts(openai);
    expect(prompts).toHaveLength(3);
    expect(prompts[2]).toContain("deploy 10 failed too");
    expect(prompts[2]).not.toContain("deploy 9 failed");
    expect(await app.stop()).toBe(0);
  });
});
