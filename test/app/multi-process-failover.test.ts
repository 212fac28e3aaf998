/**
 * Failover and fencing with real processes on one Redis. SIGKILL a process while its turns stream
 * and its cards wait: every turn finishes on the survivor within 30 s, pressing a card still runs
 * its command exactly once, and follow-ups keep the thread's context. SIGSTOP a process past its
 * lease and SIGCONT it after another took the turn over: it cannot write over the new holder's turn.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buttonId, messageWithButton, shown } from "../channels/slack/e2e-harness.js";
import type { FakeBody, FakeHandler } from "../fakes/fake-openai.js";
import type { FakeSlack } from "../fakes/fake-slack/index.js";
import { type CoworkerCluster, startCoworkers } from "../support/coworker-processes.js";

const WORDS = 60;
const FAILOVER_MS = 30_000;

const userTexts = (body: FakeBody): string[] =>
  (body.messages as { role: string; content: unknown }[])
    .filter((m) => m.role === "user")
    .map((m) => String(m.content));

/** "run <name>" asks for a command card; "frozen" streams very slowly the first time; else a slow-ish stream. */
const model: FakeHandler = ({ body }) => {
  const last = body.messages.at(-1);
  if (last?.role === "tool") return { text: `Tool said: ${last.content}` };
  const said = userTexts(body).at(-1) ?? "";
  const run = /^run (\w+)/.exec(said);
  if (run)
    return {
      toolCalls: [
        { name: "run_command", arguments: JSON.stringify({ command: `echo ran >> ${run[1]}.txt` }) },
      ],
    };
  if (said.startsWith("frozen")) {
    // Keyed by the message itself: the context block under it (the time) may differ on a resume.
    const question = said.split("\n")[0] ?? said;
    const first = !frozenAnswered.has(question);
    frozenAnswered.add(question);
    return first
      ? { text: Array.from({ length: 40 }, (_, i) => `stale${i} `), chunkDelayMs: 100 }
      : { text: "the new holder's answer" };
  }
  return { text: Array.from({ length: WORDS }, (_, i) => `word${i} `), chunkDelayMs: 40 };
};
const frozenAnswered = new Set<string>();

let cluster: CoworkerCluster;
beforeAll(async () => {
  cluster = await startCoworkers({ count: 2, model, slack: { redeliverAfterMs: 3_000 } });
}, 60_000);
afterAll(async () => cluster?.close());

function addPerson(slack: FakeSlack, n: number): { user: string; channel: string } {
  const user = `U7${n}`;
  const channel = `D7${n}`;
  slack.state.addUser({ id: user, name: `u${n}`, displayName: `User ${n}` });
  slack.state.addChannel({ id: channel, name: `dm-${n}`, type: "im", members: [user] });
  return { user, channel };
}

/** The label of the process that first posted into the thread (the one running its turn). */
function runnerOf(slack: FakeSlack, ts: string): string | undefined {
  return slack.state.calls.find(
    (call) =>
      (call.method === "chat.postMessage" || call.method === "chat.startStream") &&
      call.args.thread_ts === ts,
  )?.via;
}

describe("failover across processes", () => {
  it("kill -9 with turns streaming and cards pending: every turn finishes, no tool runs twice, context kept", async () => {
    const slack = cluster.slack!;
    const cards = [0, 1].map((n) => ({ ...addPerson(slack, n), name: `marker${n}` }));
    const talks = [2, 3, 4, 5].map((n) => addPerson(slack, n));
    const cardThreads = cards.map(
      (c) => slack.userPosts({ user: c.user, channel: c.channel, text: `run ${c.name}` }).ts,
    );
    const talkThreads = talks.map(
      (t) => slack.userPosts({ user: t.user, channel: t.channel, text: "talk to me" }).ts,
    );
    const cardMessages = await Promise.all(
      cards.map((c, i) =>
        slack.waitFor(
          () => messageWithButton(slack, c.channel, cardThreads[i]!, "Approve"),
          "a card",
          30_000,
        ),
      ),
    );
    await Promise.all(
      talks.map((t, i) =>
        slack.waitFor(
          () => slack.state.botMessages(t.channel, talkThreads[i]!).some((m) => shown(m).includes("word1 ")),
          "a stream under way",
          30_000,
        ),
      ),
    );
    const victim = runnerOf(slack, cardThreads[0]!)!;
    const onVictim = talkThreads.filter((ts) => runnerOf(slack, ts) === victim);
    expect(onVictim.length).toBeGreaterThan(0);
    const killed = cluster.processes.find((p) => p.label === victim)!;
    killed.signal("SIGKILL");
    await killed.exited;

    // Both cards are pressed after the kill; the survivor gets the presses.
    for (const [i, c] of cards.entries()) {
      const card = cardMessages[i]!;
      slack.pressButton({
        user: c.user,
        channel: c.channel,
        messageTs: card.ts,
        actionId: buttonId(card, "Approve")!,
      });
    }
    await Promise.all([
      ...cards.map((c, i) =>
        slack.waitFor(
          () =>
            slack.state.botMessages(c.channel, cardThreads[i]!).some((m) => /(^|\n)Tool said/.test(shown(m))),
          `${c.name}'s turn to finish`,
          FAILOVER_MS,
        ),
      ),
      ...talks.map((t, i) =>
        slack.waitFor(
          () =>
            slack.state
              .botMessages(t.channel, talkThreads[i]!)
              .some((m) => !m.streaming && shown(m).includes(`word${WORDS - 1} `)),
          `talk ${i} to finish`,
          FAILOVER_MS,
        ),
      ),
    ]);
    for (const c of cards)
      expect(readFileSync(join(cluster.workspace, `${c.name}.txt`), "utf8")).toBe("ran\n");

    // A follow-up in a thread whose turn the dead process ran still sees the thread.
    const resumed = talks[talkThreads.indexOf(onVictim[0]!)]!;
    const before = cluster.openai.requests.length;
    slack.userPosts({
      user: resumed.user,
      channel: resumed.channel,
      text: "and then?",
      threadTs: onVictim[0]!,
    });
    await slack.waitFor(
      () => cluster.openai.requests.length > before || undefined,
      "the follow-up's model request",
      FAILOVER_MS,
    );
    const followUp = userTexts(cluster.openai.requests[before]);
    expect(followUp[0]).toMatch(/^talk to me/);
    expect(followUp.at(-1)).toMatch(/^and then\?/);
  }, 120_000);

  it("a process frozen past its lease cannot write over the new holder's turn when it resumes", async () => {
    const slack = cluster.slack!;
    if (cluster.alive().length < 2) await cluster.start("p3");
    const person = addPerson(slack, 9);
    const { ts } = slack.userPosts({ user: person.user, channel: person.channel, text: "frozen question" });
    await slack.waitFor(
      () => slack.state.botMessages(person.channel, ts).some((m) => shown(m).includes("stale1 ")),
      "the first holder's stream",
      30_000,
    );
    const holder = cluster.processes.find((p) => p.label === runnerOf(slack, ts))!;
    holder.signal("SIGSTOP");
    const answer = await slack.waitFor(
      () =>
        slack.state.botMessages(person.channel, ts).find((m) => shown(m).includes("the new holder's answer")),
      "the new holder's answer",
      FAILOVER_MS,
    );
    const answeredBy = slack.state.calls.find((call) =>
      JSON.stringify(call.args).includes("the new holder's answer"),
    );
    expect(answeredBy?.via).not.toBe(holder.label);
    holder.signal("SIGCONT");
    // The resumed process finds its lease taken (its fenced writes are refused meanwhile).
    await holder.waitForLog(
      (line) => line.msg === "session lease lost" || JSON.stringify(line).includes("StaleFenceError"),
      "the old holder to notice",
      FAILOVER_MS,
    );

    const before = cluster.openai.requests.length;
    slack.userPosts({ user: person.user, channel: person.channel, text: "what did you say?", threadTs: ts });
    await slack.waitFor(
      () => cluster.openai.requests.length > before || undefined,
      "the follow-up",
      FAILOVER_MS,
    );
    const history = (cluster.openai.requests[before].messages as { role: string; content: unknown }[]).filter(
      (m) => m.role === "assistant",
    );
    expect(history.map((m) => String(m.content))).toEqual(["the new holder's answer"]);
    expect(shown(answer)).not.toContain("stale39");
    expect(existsSync(join(cluster.workspace, "frozen.txt"))).toBe(false);
  }, 120_000);
});
