/**
 * Controls across real processes on one Redis: an approval card pressed on a process other than
 * the one the turn is parked on runs the command exactly once and finishes the turn; "stop" typed
 * into a thread and delivered to a process other than the one streaming stops the stream.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buttonId, messageWithButton, shown } from "../channels/slack/e2e-harness.js";
import type { FakeBody, FakeHandler } from "../fakes/fake-openai.js";
import type { ApiCall, FakeSlack } from "../fakes/fake-slack/index.js";
import { type CoworkerCluster, startCoworkers } from "../support/coworker-processes.js";

const ANA = "U1ANA";
const DM = "D1ANA";
const WORDS = 300;

const lastUser = (body: FakeBody): string => {
  const users = (body.messages as { role: string; content: unknown }[]).filter((m) => m.role === "user");
  return String(users.at(-1)?.content ?? "");
};

const model: FakeHandler = ({ body }) => {
  const last = body.messages.at(-1);
  if (last?.role === "tool") return { text: `Tool said: ${last.content}` };
  if (lastUser(body).startsWith("please run")) {
    return {
      toolCalls: [{ name: "run_command", arguments: JSON.stringify({ command: "echo ran >> marker.txt" }) }],
    };
  }
  return { text: Array.from({ length: WORDS }, (_, i) => `word${i} `), chunkDelayMs: 40 };
};

let cluster: CoworkerCluster;
beforeAll(async () => {
  cluster = await startCoworkers({ count: 2, model, slack: { redeliverAfterMs: 3_000 } });
  cluster.slack!.state.addUser({ id: ANA, name: "ana", displayName: "Ana" });
  cluster.slack!.state.addChannel({ id: DM, name: "dm-ana", type: "im", members: [ANA] });
}, 60_000);
afterAll(async () => cluster?.close());

/** The label of the process that made the first call matching `test`. */
function processOf(slack: FakeSlack, test: (call: ApiCall) => boolean): string {
  const via = slack.state.calls.find(test)?.via;
  if (!via) throw new Error("no such call");
  return via;
}

const other = (label: string) => (label === "p1" ? "p2" : "p1");

describe("controls across processes", () => {
  it("an approval pressed on another process runs the command once and finishes the turn", async () => {
    const slack = cluster.slack!;
    const { ts } = slack.userPosts({ user: ANA, channel: DM, text: "please run the marker command" });
    const card = await slack.waitFor(
      () => messageWithButton(slack, DM, ts, "Approve"),
      "the approval card",
      30_000,
    );
    const parkedOn = processOf(
      slack,
      (call) => call.method === "chat.postMessage" && call.args.thread_ts === ts,
    );
    slack.pressButton({
      user: ANA,
      channel: DM,
      messageTs: card.ts,
      actionId: buttonId(card, "Approve")!,
      to: other(parkedOn),
    });
    const reply = await slack.waitFor(
      () =>
        slack.state
          .botMessages(DM, ts)
          .map(shown)
          .find((text) => /(^|\n)Tool said/.test(text)),
      "the finished turn",
      30_000,
    );
    expect(reply).toContain("[exit code 0]");
    expect(readFileSync(join(cluster.workspace, "marker.txt"), "utf8")).toBe("ran\n");
    const run = cluster.openai.requests.filter((body) => body.messages.at(-1)?.role === "tool");
    expect(run).toHaveLength(1);
  }, 60_000);

  it("stop delivered to a process other than the one streaming stops the stream", async () => {
    const slack = cluster.slack!;
    const before = cluster.openai.requests.length;
    const { ts } = slack.userPosts({ user: ANA, channel: DM, text: "talk for a long time" });
    const live = await slack.waitFor(
      () => slack.state.botMessages(DM, ts).find((m) => shown(m).includes("word5 ")),
      "the stream under way",
      30_000,
    );
    const streaming = processOf(
      slack,
      (call) =>
        (call.method === "chat.startStream" || call.method === "chat.postMessage") &&
        call.args.thread_ts === ts,
    );
    slack.userPosts({ user: ANA, channel: DM, text: "stop", threadTs: ts, to: other(streaming) });
    await cluster.openai.waitForAbort(before);
    await slack.waitFor(() => !live.streaming || undefined, "the stream to end", 30_000);
    expect(shown(live)).not.toContain(`word${WORDS - 1} `);
    // "stop" was a control for the running turn, not a message for the model.
    expect(cluster.openai.requests).toHaveLength(before + 1);
  }, 60_000);
});
