/**
 * Intake fuzz against the running app: `coworker start` (real Bolt app, real grammY bot, the
 * session layer on SQLite) on the fake Slack, fake Telegram and fake model, fed 10,000 generated
 * payloads — Socket Mode frames, Telegram updates, Slack and Telegram button payloads, and signed
 * HTTP Events API bodies — in batches. After every batch the process is still up (no fatal fault
 * was reported, the run has not exited) and every Socket Mode envelope carrying an id was acked;
 * every HTTP request was answered without a server error. Afterwards a person's normal message
 * still gets the model's answer on each platform.
 */
import { createServer } from "node:net";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import type { Env } from "../../src/config/env-overrides.js";
import { startFakeOpenAI } from "../fakes/fake-openai.js";
import { type FakeSlack, startFakeSlack } from "../fakes/fake-slack/index.js";
import { slackSignature } from "../fakes/fake-slack/http-delivery.js";
import { startFakeTelegram } from "../fakes/fake-telegram/fake-telegram.js";
import { ALICE, ALICE_DM, MALLORY } from "../channels/telegram/harness.js";
import { shown } from "../channels/slack/e2e-harness.js";
import {
  httpBody,
  type RawFrame,
  slackBody,
  slackPress,
  socketFrame,
  telegramPress,
  telegramUpdate,
} from "../support/intake-fuzz.js";
import { makeProject, startCoworker } from "./run-coworker.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const BATCH = 100;
const ANA = "U1ANA";
const DM = "D1ANA";

async function fakeModel() {
  const openai = await startFakeOpenAI(({ body }) => ({
    text: `pong: ${String(body.messages.at(-1)?.content ?? "").slice(0, 40)}`,
  }));
  closers.push(() => openai.close());
  return openai;
}

async function fakeSlack(): Promise<FakeSlack> {
  const slack = await startFakeSlack();
  closers.push(() => slack.close());
  slack.state.addUser({ id: ANA, name: "ana", displayName: "Ana" });
  slack.state.addChannel({ id: DM, name: "dm-ana", type: "im", members: [ANA] });
  return slack;
}

/** `coworker start` with `env`, logs silenced, only Ana served on Slack; stopped after the test. */
function start(env: Env, yaml = "") {
  const run = startCoworker(
    makeProject(`log:\n  level: silent\nslack:\n  allowed_users: [${ANA}]\n${yaml}`),
    env,
  );
  closers.push(async () => {
    run.signals.emit("SIGTERM");
    await run.exited;
  });
  return run;
}

/** Still running: no fatal fault forced an exit and `coworker start` has not returned. */
async function stillUp(run: ReturnType<typeof start>): Promise<boolean> {
  const ended = await Promise.race([run.exited.then(() => true), new Promise((r) => setImmediate(r, false))]);
  return !ended && run.t.forced.length === 0;
}

/** Ana writes in her DM and the model's answer arrives. */
async function answersAna(slack: FakeSlack, text: string): Promise<string> {
  const { ts } = slack.userPosts({ user: ANA, channel: DM, text });
  const reply = await slack.waitFor(
    () => slack.state.botMessages(DM, ts).find((message) => shown(message).includes("pong:")),
    "the answer to Ana",
  );
  return shown(reply);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

describe("intake fuzz against the running app", () => {
  it("survives 8,000 Socket Mode frames, Telegram updates and button payloads, acks every envelope, answers afterwards", async () => {
    const slack = await fakeSlack();
    const tg = await startFakeTelegram();
    closers.push(() => tg.close());
    const openai = await fakeModel();
    const run = start({
      OPENAI_BASE_URL: openai.baseURL,
      SLACK_BOT_TOKEN: slack.state.botToken,
      SLACK_APP_TOKEN: slack.state.appToken,
      SLACK_API_URL: slack.apiUrl,
      TELEGRAM_BOT_TOKEN: tg.token,
      TELEGRAM_API_ROOT: tg.apiRoot,
      TELEGRAM_ALLOWED_USERS: String(ALICE.id),
    });
    await slack.waitFor(() => slack.socket.open > 0 || undefined, "the socket connection");
    await tg.waitFor(() => tg.callsOf("getUpdates").length > 0);
    expect(await answersAna(slack, "before the fuzz")).toContain("pong: before the fuzz");

    const team = slack.state.teamId;
    const sendFrames = async (frames: readonly RawFrame[]) => {
      for (const frame of frames) slack.socket.sendRaw(frame.text, frame.envelopeId);
      const unacked = () =>
        frames.filter(
          (f) => f.envelopeId !== undefined && slack.state.acks.get(f.envelopeId)?.ackedAt === undefined,
        );
      await slack
        .waitFor(() => unacked().length === 0 || undefined, "every envelope acked", 5_000)
        .catch(() => {
          throw new Error(`not acked: ${unacked()[0]?.text}`);
        });
      return stillUp(run);
    };
    const payload = fc.oneof(slackBody(team, DM), slackBody(team, "C0NONE"));
    const frames = fc.array(socketFrame(payload), { minLength: BATCH, maxLength: BATCH });
    await fc.assert(fc.asyncProperty(frames, sendFrames), { numRuns: 30, endOnFailure: true });
    const presses = fc.array(socketFrame(slackPress(team, DM)), { minLength: BATCH, maxLength: BATCH });
    await fc.assert(fc.asyncProperty(presses, sendFrames), { numRuns: 10, endOnFailure: true });

    const sendUpdates = async (bodies: readonly Record<string, unknown>[]) => {
      const before = tg.callsOf("getUpdates").length;
      for (const body of bodies) tg.injectUpdate(body);
      // Every update was fetched and then confirmed by the next poll's offset.
      await tg
        .waitFor(() => tg.pendingUpdates === 0 || undefined, 20_000)
        .catch(() => {
          throw new Error(
            `updates left: ${tg.pendingUpdates}, polls ${tg.callsOf("getUpdates").length - before}, up ${run.t.forced}`,
          );
        });
      return stillUp(run);
    };
    const updates = fc.array(telegramUpdate(MALLORY.id, ALICE_DM.id), { minLength: BATCH, maxLength: BATCH });
    await fc.assert(fc.asyncProperty(updates, sendUpdates), { numRuns: 30, endOnFailure: true });
    const taps = fc.array(telegramPress(MALLORY.id, ALICE_DM.id), { minLength: BATCH, maxLength: BATCH });
    // Every press that names a query id is answered, however malformed the rest of it is.
    const answersEveryPress = async (bodies: readonly Record<string, unknown>[]) => {
      if (!(await sendUpdates(bodies))) return false;
      const ids = bodies
        .map((body) => (body.callback_query as { id?: unknown } | null | undefined)?.id)
        .filter((id): id is string => typeof id === "string" && id.length > 0 && id.length <= 200);
      const answered = () =>
        new Set(tg.callsOf("answerCallbackQuery").map((call) => String(call.params.callback_query_id)));
      await tg.waitFor(() => ids.every((id) => answered().has(id)) || undefined);
      return true;
    };
    await fc.assert(fc.asyncProperty(taps, answersEveryPress), { numRuns: 10, endOnFailure: true });

    expect(await stillUp(run)).toBe(true);
    expect(await answersAna(slack, "after the fuzz")).toContain("pong: after the fuzz");
    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "still there?" });
    const answer = await tg.waitFor(() =>
      tg.state.botMessages(ALICE.id).find((message) => (message.text ?? "").includes("pong: still there?")),
    );
    expect(answer.text).toContain("pong:");
  }, 120_000);

  it("answers 2,000 signed HTTP Events API and interactivity bodies without a server error, answers afterwards", async () => {
    const slack = await fakeSlack();
    const openai = await fakeModel();
    const port = await freePort();
    const secret = "fuzz-signing-secret";
    const run = start(
      {
        OPENAI_BASE_URL: openai.baseURL,
        SLACK_BOT_TOKEN: slack.state.botToken,
        SLACK_SIGNING_SECRET: secret,
        SLACK_API_URL: slack.apiUrl,
      },
      `  http:\n    port: ${port}\n    path: /slack/events\n`,
    );
    const url = `http://127.0.0.1:${port}/slack/events`;
    const post = async (delivery: { contentType: string; body: string }) => {
      const timestamp = Math.floor(Date.now() / 1000);
      const response = await fetch(url, {
        method: "POST",
        headers: {
          "content-type": delivery.contentType,
          "x-slack-request-timestamp": String(timestamp),
          "x-slack-signature": slackSignature(secret, timestamp, delivery.body),
        },
        body: delivery.body,
      });
      await response.text();
      return response.status;
    };
    // The receiver listens once start-up is through; wait for its first answer.
    for (let i = 0; ; i++) {
      const status = await post({ contentType: "application/json", body: "{}" }).catch(() => 0);
      if (status !== 0) break;
      if (i > 200) throw new Error("the Slack HTTP receiver never answered");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }

    const bodies = fc.array(httpBody(slack.state.teamId, DM), { minLength: BATCH, maxLength: BATCH });
    await fc.assert(
      fc.asyncProperty(bodies, async (batch) => {
        const statuses = await Promise.all(batch.map(post));
        return statuses.every((status) => status < 500) && (await stillUp(run));
      }),
      { numRuns: 20, endOnFailure: true },
    );
    expect(await stillUp(run)).toBe(true);
    expect(await answersAnaOverHttp(slack, post, "after the http fuzz")).toContain(
      "pong: after the http fuzz",
    );
  }, 120_000);
});

/** Ana's DM delivered as a signed HTTP event; resolves with the model's answer in the thread. */
async function answersAnaOverHttp(
  slack: FakeSlack,
  post: (delivery: { contentType: string; body: string }) => Promise<number>,
  text: string,
): Promise<string> {
  const ts = slack.state.nextTs();
  const body = {
    type: "event_callback",
    team_id: slack.state.teamId,
    api_app_id: slack.state.appId,
    event_id: `EvHTTP${ts.replace(".", "")}`,
    event: {
      type: "message",
      channel: DM,
      channel_type: "im",
      user: ANA,
      text,
      ts,
      team: slack.state.teamId,
    },
  };
  expect(await post({ contentType: "application/json", body: JSON.stringify(body) })).toBe(200);
  const reply = await slack.waitFor(
    () => slack.state.botMessages(DM, ts).find((message) => shown(message).includes("pong:")),
    "the answer to Ana over HTTP",
  );
  return shown(reply);
}
