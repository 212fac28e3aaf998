/**
 * Three real Coworker processes on one Redis, each with its own Socket Mode connection to the
 * fake Slack, which hands each envelope to one of them in turn: 30 threads × 3 messages — every
 * message is answered exactly once in its thread, by whichever process got it, and each
 * follow-up's model request holds the thread's earlier messages.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { echoHandler, type FakeBody } from "../fakes/fake-openai.js";
import type { FakeSlack } from "../fakes/fake-slack/index.js";
import { shown } from "../channels/slack/e2e-harness.js";
import { type CoworkerCluster, startCoworkers } from "../support/coworker-processes.js";

const THREADS = 30;
const MESSAGES = 3;

let cluster: CoworkerCluster;
beforeAll(async () => {
  cluster = await startCoworkers({ count: 3, model: echoHandler, slack: { redeliverAfterMs: 3_000 } });
}, 60_000);
afterAll(async () => cluster?.close());

const person = (i: number) => ({
  user: `U1${String(i).padStart(4, "0")}`,
  channel: `D1${String(i).padStart(4, "0")}`,
});
const text = (thread: number, message: number) => `t${thread} m${message}`;

/** The bot's replies in a thread that quote this message. */
function answersTo(slack: FakeSlack, channel: string, ts: string, message: string): number {
  return slack.state.botMessages(channel, ts).filter((m) => shown(m).includes(`You said: "${message}\n`))
    .length;
}

function userContents(body: FakeBody): string[] {
  return (body.messages as { role: string; content: unknown }[])
    .filter((m) => m.role === "user")
    .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
}

describe("three processes on one Redis", () => {
  it("answers 30 threads × 3 messages exactly once each, with the thread's context", async () => {
    const slack = cluster.slack!;
    const roots: string[] = [];
    for (let i = 0; i < THREADS; i++) {
      const { user, channel } = person(i);
      slack.state.addUser({ id: user, name: `user${i}`, displayName: `User ${i}` });
      slack.state.addChannel({ id: channel, name: `dm-${i}`, type: "im", members: [user] });
    }
    await Promise.all(
      Array.from({ length: THREADS }, async (_, i) => {
        const { user, channel } = person(i);
        const root = slack.userPosts({ user, channel, text: text(i, 1) }).ts;
        roots[i] = root;
        for (let m = 1; m <= MESSAGES; m++) {
          if (m > 1) slack.userPosts({ user, channel, text: text(i, m), threadTs: root });
          await slack.waitFor(
            () => answersTo(slack, channel, root, text(i, m)) > 0,
            `the answer to ${text(i, m)}`,
            60_000,
          );
        }
      }),
    );
    // Redeliveries and late duplicates would show up by now: wait for the processes to go idle.
    await slack.waitFor(
      () => cluster.openai.requests.length >= THREADS * MESSAGES || undefined,
      "every model request",
    );
    for (let i = 0; i < THREADS; i++) {
      const { channel } = person(i);
      for (let m = 1; m <= MESSAGES; m++)
        expect(answersTo(slack, channel, roots[i]!, text(i, m)), text(i, m)).toBe(1);
    }
    expect(cluster.openai.requests).toHaveLength(THREADS * MESSAGES);
    for (const body of cluster.openai.requests) {
      const users = userContents(body);
      const match = /^t(\d+) m(\d+)\n/.exec(users.at(-1) ?? "");
      expect(match, users.at(-1)).not.toBeNull();
      const [thread, message] = [Number(match![1]), Number(match![2])];
      const earlier = Array.from({ length: message - 1 }, (_, k) => text(thread, k + 1));
      for (const before of earlier)
        expect(
          users.some((u) => u === before || u.startsWith(`${before}\n`)),
          `${text(thread, message)} sees ${before}`,
        ).toBe(true);
      expect(users).toHaveLength(message);
    }
    // Every process took part.
    const replied = new Set(
      slack.state.calls
        .filter((call) => call.method === "chat.postMessage" || call.method === "chat.startStream")
        .map((call) => call.via),
    );
    expect([...replied].sort()).toEqual(["p1", "p2", "p3"]);
  }, 90_000);
});
