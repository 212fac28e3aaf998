import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agentEvent } from "../../../src/core/events.js";
import type { ThreadTarget } from "../../../src/core/thread-target.js";
import { type FakeSlack, startFakeSlack } from "../../fakes/fake-slack/index.js";
import { actionIds, blockTexts, ev, outputFor } from "./support.js";
import { permissionRequired } from "../shared/agent-events.js";

let fake: FakeSlack;
const DM = "D0DM";
const CHANNEL = "C0GEN";
let dm: ThreadTarget;
let channel: ThreadTarget;

beforeEach(async () => {
  fake = await startFakeSlack();
  fake.state.addUser({ id: "U1", name: "ana" });
  fake.state.addChannel({ id: DM, name: "dm-ana", type: "im", members: ["U1"] });
  fake.state.addChannel({ id: CHANNEL, name: "general", type: "channel", members: ["U1"] });
  const root = fake.state.nextTs();
  dm = {
    platform: "slack",
    workspace: fake.state.teamId,
    channel: DM,
    thread: root,
    extra: { user: "U1", kind: "dm" },
  };
  channel = { ...dm, channel: CHANNEL, extra: { user: "U1", kind: "channel" } };
});
afterEach(async () => fake.close());

describe("pages mode (no native streaming)", () => {
  it("posts a live reply with a Stop button, updates tool lines in place, and ends without it", async () => {
    const { output } = outputFor(fake, dm, { nativeStreaming: false });
    const turn = output.beginTurn({ sessionId: "s1", turnId: "t1" });
    await turn.handle(ev.text("Let me run the tests."));
    const live = await fake.waitFor(() => fake.state.botMessages(DM, dm.thread)[0], "the live reply");
    expect(actionIds(live.blocks)).toEqual(["coworker_stop"]);
    await turn.handle(ev.done("Let me run the tests."));
    await turn.handle(ev.toolStart("c1", "npm test"));
    await fake.waitFor(
      () => blockTexts(live.blocks).some((t) => t.includes("Running `npm test`…")),
      "running line",
    );
    await turn.handle(ev.toolEnd("c1", "ok", 3_200));
    await turn.handle(ev.text("All **green**."));
    await turn.handle(ev.done("All **green**.", 2));
    await turn.handle(ev.completed("All **green**."));
    await turn.close();

    const messages = fake.state.botMessages(DM, dm.thread);
    expect(messages).toHaveLength(1);
    const final = messages[0]!;
    expect(blockTexts(final.blocks)).toEqual([
      "Let me run the tests.",
      "✓ `npm test` · 3.2 s",
      "All *green*.",
    ]);
    expect(actionIds(final.blocks)).toEqual([]);
    expect(fake.state.callsOf("chat.startStream")).toHaveLength(0);
  });

  it("shows a failed tool with ✗ and a model failure with a friendly message and a Retry button", async () => {
    const { output } = outputFor(fake, dm, { nativeStreaming: false });
    const turn = output.beginTurn({ sessionId: "s1", turnId: "t1" });
    await turn.handle(ev.toolStart("c1", "make build"));
    await turn.handle(ev.toolEnd("c1", "error", 850));
    await turn.handle(ev.error("provider returned 500 Internal Server Error"));
    await turn.handle(ev.completed("", "error"));
    await turn.close();
    const [message] = fake.state.botMessages(DM, dm.thread);
    const texts = blockTexts(message!.blocks);
    expect(texts[0]).toBe("✗ `make build` · 850 ms");
    expect(texts[1]).toMatch(/^:warning: Sorry — I couldn't finish this answer \(provider returned 500/);
    expect(actionIds(message!.blocks)).toEqual(["coworker_retry"]);
  });
});

describe("notes and progress", () => {
  it("keeps progress out of the thread, shows lasting notes as lines, and a closed waiting turn as paused", async () => {
    const { output } = outputFor(fake, dm, { nativeStreaming: false });
    const turn = output.beginTurn({ sessionId: "s1", turnId: "t1" });
    await turn.handle(ev.text("Looking "));
    await turn.handle(agentEvent({ type: "notice", level: "progress", message: "indexing files" }));
    await turn.handle(ev.text("around."));
    await turn.handle(ev.done("Looking around."));
    await turn.handle(agentEvent({ type: "notice", level: "info", message: "cache warmed" }));
    await turn.handle(permissionRequired("w1"));
    await turn.close();
    const [message] = fake.state.botMessages(DM, dm.thread);
    expect(blockTexts(message!.blocks)).toEqual([
      "Looking around.",
      ":information_source: cache warmed\n:double_vertical_bar: `write_file` — waiting for approval",
      ":double_vertical_bar: Paused until the request above is answered.",
    ]);
    expect(actionIds(message!.blocks)).toEqual([]);
  });
});

describe("notes and failures that would mention or link", () => {
  /** What a reviewer's reason, a provider's error or a failure message may carry. */
  const LIVE = "<!channel> <@U0CEO> <https://x.example|approve>";
  const INERT = "&lt;!channel&gt; &lt;@U0CEO&gt; &lt;https://x.example|approve&gt;";

  it("shows a notice, a problem and a failure escaped, in the blocks and the notification text", async () => {
    const { output } = outputFor(fake, dm, { nativeStreaming: false });
    const turn = output.beginTurn({ sessionId: "s1", turnId: "t1" });
    await turn.handle(
      agentEvent({ type: "notice", level: "warning", message: `Reviewer blocked it: ${LIVE}` }),
    );
    await turn.handle(ev.error(`Tool failed: ${LIVE}`, true));
    await turn.handle(ev.error(`upstream said: ${LIVE}`));
    await turn.handle(ev.completed("", "error"));
    await turn.close();
    const [message, ...more] = fake.state.botMessages(DM, dm.thread);
    expect(more).toEqual([]);
    const texts = blockTexts(message!.blocks);
    expect(texts[0]).toBe(`:warning: Reviewer blocked it: ${INERT}\n:warning: Tool failed: ${INERT}`);
    expect(texts[1]).toContain("(upstream said: &lt;!channel&gt; &lt;@U0CEO&gt; &lt;");
    expect(message!.text).toContain(`(upstream said: ${INERT})`);
    const sent = [...fake.state.callsOf("chat.postMessage"), ...fake.state.callsOf("chat.update")];
    expect(JSON.stringify(sent.map((call) => [call.args.text, call.args.blocks]))).not.toMatch(
      /<[!@#]|<https:\/\/x\.example\|approve>/,
    );
  });

  it("streams a note with its mentions inert and its text unescaped", async () => {
    const { output } = outputFor(fake, dm);
    const turn = output.beginTurn({ sessionId: "s1", turnId: "t1" });
    await turn.handle(ev.text("Checking"));
    await fake.waitFor(() => fake.state.callsOf("chat.startStream")[0], "the stream");
    await turn.handle(
      agentEvent({ type: "notice", level: "warning", message: `Reviewer blocked it: <!channel> & <@U0CEO>` }),
    );
    await turn.handle(ev.completed("Checking"));
    await turn.close();
    const [message] = fake.state.botMessages(DM, dm.thread);
    expect(message?.streamed).toBe(true);
    expect(message?.markdown).not.toMatch(/<[!@#]/);
    expect(message?.markdown).not.toContain("&lt;");
    expect(message?.markdown.replaceAll("\u200b", "")).toContain(
      "> :warning: Reviewer blocked it: <!channel> & <@U0CEO>",
    );
  });
});

/**
 * The bot's message in the DM after a turn streamed `chunks` (the stream started once the first
 * was in) and completed with all of them as its answer.
 */
async function streamedInDm(chunks: readonly string[]) {
  const { output } = outputFor(fake, dm);
  const turn = output.beginTurn({ sessionId: "s1", turnId: "t1" });
  await turn.handle(ev.text(chunks[0]!));
  await fake.waitFor(() => fake.state.callsOf("chat.startStream")[0], "the stream");
  for (const chunk of chunks.slice(1)) await turn.handle(ev.text(chunk));
  await turn.handle(ev.completed(chunks.join("")));
  await turn.close();
  return fake.state.botMessages(DM, dm.thread)[0];
}

describe("native streaming", () => {
  it("streams a DM answer with task cards and finishes with stopStream, posting nothing else", async () => {
    const { output } = outputFor(fake, dm);
    const turn = output.beginTurn({ sessionId: "s1", turnId: "t1" });
    await turn.handle(ev.text("Checking"));
    await fake.waitFor(() => fake.state.callsOf("chat.startStream")[0], "the stream");
    await turn.handle(ev.toolStart("c1", "npm test"));
    await turn.handle(ev.toolEnd("c1", "ok", 1_500));
    await turn.handle(ev.text("Done."));
    await turn.handle(ev.completed("Checking\n\nDone."));
    await turn.close();
    const [message] = fake.state.botMessages(DM, dm.thread);
    expect(message?.streamed).toBe(true);
    expect(message?.streaming).toBe(false);
    expect(message?.markdown).toBe("Checking\n\nDone.");
    expect(message?.tasks.get("c1")).toEqual({
      id: "c1",
      title: "npm test",
      status: "complete",
      details: "1.5 s",
    });
    expect(fake.state.callsOf("chat.postMessage")).toHaveLength(0);
    expect(fake.state.callsOf("chat.update")).toHaveLength(0);
  });

  it("streams no live mention: <!channel> or <@U…> from the model, even split across chunks, pages nobody", async () => {
    const message = await streamedInDm(["Heads up", " <!here> and <", "@U0BOSS> see <", "!channel>"]);
    expect(message?.streamed).toBe(true);
    expect(message?.markdown).not.toMatch(/<[!@#]/);
    expect(message?.markdown.replaceAll("\u200b", "")).toBe("Heads up <!here> and <@U0BOSS> see <!channel>");
  });

  it("streams no spoofed link: a link whose text is another address shows its real target, even split across chunks", async () => {
    const message = await streamedInDm([
      "Log in at",
      " [https://sso.example.com/lo",
      "gin](https://evil.example.net/",
      "phish) or [ask",
    ]);
    expect(message?.streamed).toBe(true);
    expect(message?.markdown).toBe(
      "Log in at https://sso.example.com/login (https://evil.example.net/phish) or [ask",
    );
  });

  it("still lands the final answer when the stream's last call loses its connection", async () => {
    const { output } = outputFor(fake, dm);
    const turn = output.beginTurn({ sessionId: "s1", turnId: "t1" });
    await turn.handle(ev.text("Checking"));
    await fake.waitFor(() => fake.state.callsOf("chat.startStream")[0], "the stream");
    fake.state.dropNext("chat.stopStream");
    await turn.handle(ev.text(" and done."));
    await turn.handle(ev.completed("Checking and done."));
    await turn.close();
    // The stream's message is taken over as a page and updated to the whole answer.
    const messages = fake.state.botMessages(DM, dm.thread);
    expect(messages).toHaveLength(1);
    const [message] = messages;
    expect(message!.streaming).toBe(false);
    expect(blockTexts(message!.blocks)).toEqual(["Checking and done."]);
    expect(fake.state.calls.map((call) => call.method).slice(-2)).toEqual(["chat.stopStream", "chat.update"]);
  });

  it("sends a quick answer as one message, without a stream or a thinking status", async () => {
    const { output } = outputFor(fake, dm, { firstFlushMs: 500, statusDelayMs: 500 });
    const turn = output.beginTurn({ sessionId: "s1", turnId: "t1" });
    await turn.handle(ev.text("Quick."));
    await turn.handle(ev.completed("Quick."));
    await turn.close();
    expect(fake.state.calls.map((c) => c.method)).toEqual(["chat.postMessage"]);
    expect(blockTexts(fake.state.botMessages(DM, dm.thread)[0]!.blocks)).toEqual(["Quick."]);
  });

  it("sends a long quick answer as one message too, though it fills the stream helper's buffer", async () => {
    const { output } = outputFor(fake, dm, { firstFlushMs: 500, statusDelayMs: 500 });
    const answer = "A quick but long answer. ".repeat(40);
    const turn = output.beginTurn({ sessionId: "s1", turnId: "t1" });
    await turn.handle(ev.text(answer));
    await turn.handle(ev.done(answer));
    await turn.handle(ev.completed(answer));
    await turn.close();
    expect(fake.state.calls.map((c) => c.method)).toEqual(["chat.postMessage"]);
  });

  it("posts an answer complete by its first flush as one message, however late the turn got to it", async () => {
    const { output } = outputFor(fake, dm, { firstFlushMs: 50, statusDelayMs: 10_000 });
    const turn = output.beginTurn({ sessionId: "s1", turnId: "t1" });
    await new Promise((resolve) => setTimeout(resolve, 120));
    await turn.handle(ev.text("Late but whole."));
    await turn.handle(ev.done("Late but whole."));
    await turn.handle(ev.completed("Late but whole."));
    const message = await fake.waitFor(
      () => fake.state.botMessages(DM, dm.thread)[0],
      "the reply, before close",
    );
    await turn.close();
    expect(fake.state.calls.map((c) => c.method)).toEqual(["chat.postMessage"]);
    expect(blockTexts(message.blocks)).toEqual(["Late but whole."]);
    expect(actionIds(message.blocks)).toEqual([]);
  });

  it("holds an answer complete while nothing shows yet until its turn ends, then posts it once", async () => {
    const { output } = outputFor(fake, dm, { firstFlushMs: 50, statusDelayMs: 10_000 });
    const turn = output.beginTurn({ sessionId: "s1", turnId: "t1" });
    await turn.handle(ev.text("Whole answer."));
    await turn.handle(ev.done("Whole answer."));
    // The first flush falls between the answer and the turn's end (the store takes a moment).
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(fake.state.calls).toHaveLength(0);
    await turn.handle(ev.completed("Whole answer."));
    await turn.close();
    expect(fake.state.calls.map((c) => c.method)).toEqual(["chat.postMessage"]);
    // A message with a tool call is not the answer: the turn shows what it does meanwhile.
    const { output: next } = outputFor(fake, dm, { firstFlushMs: 50, statusDelayMs: 10_000 });
    const working = next.beginTurn({ sessionId: "s1", turnId: "t2" });
    await working.handle(ev.text("Looking."));
    await working.handle(ev.done("Looking.", 1, 1));
    await fake.waitFor(() => fake.state.callsOf("chat.startStream")[0], "the stream");
    await working.handle(ev.completed("Looking."));
    await working.close();
  });

  it("streams content that first comes after the hold-back from its next chunk on", async () => {
    const { output } = outputFor(fake, dm, { firstFlushMs: 50, statusDelayMs: 10_000 });
    const turn = output.beginTurn({ sessionId: "s1", turnId: "t1" });
    await new Promise((resolve) => setTimeout(resolve, 120));
    await turn.handle(ev.text("Slow "));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(fake.state.calls).toHaveLength(0);
    await turn.handle(ev.text("start."));
    const start = await fake.waitFor(() => fake.state.callsOf("chat.startStream")[0], "the stream");
    expect(JSON.stringify(start.args)).toContain("Slow start.");
    await turn.handle(ev.completed("Slow start."));
    await turn.close();
    expect(fake.state.callsOf("chat.stopStream")).toHaveLength(1);
  });

  it("names the recipient's own team (extra.team) when it differs from the session's workspace", async () => {
    const partner = { ...channel, extra: { user: "U1", kind: "channel", team: "T0002" } };
    const turn = outputFor(fake, partner).output.beginTurn({ sessionId: "s1", turnId: "t1" });
    await turn.handle(ev.text("Hello there"));
    const start = await fake.waitFor(() => fake.state.callsOf("chat.startStream")[0], "the stream");
    await turn.handle(ev.completed("Hello there"));
    await turn.close();
    expect(start.args).toMatchObject({ recipient_user_id: "U1", recipient_team_id: "T0002" });
  });

  it("streams in channels with the recipient, and latches to pages when Slack refuses streaming", async () => {
    fake.state.streaming = "feature_not_enabled";
    const harness = outputFor(fake, channel);
    const first = harness.output.beginTurn({ sessionId: "s1", turnId: "t1" });
    await first.handle(ev.text("Hello there"));
    await fake.waitFor(() => fake.state.callsOf("chat.startStream")[0], "a stream attempt");
    await first.handle(ev.completed("Hello there"));
    await first.close();
    const start = fake.state.callsOf("chat.startStream")[0];
    expect(start?.args).toMatchObject({ recipient_user_id: "U1", recipient_team_id: fake.state.teamId });
    expect(blockTexts(fake.state.botMessages(CHANNEL, channel.thread)[0]!.blocks)).toEqual(["Hello there"]);
    expect(harness.capabilities.isOff("stream", "channel")).toBe(true);

    const second = harness.output.beginTurn({ sessionId: "s1", turnId: "t2" });
    await second.handle(ev.text("Again"));
    await second.handle(ev.completed("Again"));
    await second.close();
    expect(fake.state.callsOf("chat.startStream")).toHaveLength(1);
    expect(fake.state.botMessages(CHANNEL, channel.thread)).toHaveLength(2);
  });

  it("ends a failed streamed turn with the friendly message and a Retry button under the stream", async () => {
    const { output } = outputFor(fake, dm);
    const turn = output.beginTurn({ sessionId: "s1", turnId: "t1" });
    await turn.handle(ev.text("Half an answer"));
    const message = await fake.waitFor(() => fake.state.botMessages(DM, dm.thread)[0], "stream start");
    await turn.handle(ev.error("connection reset"));
    await turn.handle(ev.completed("", "error"));
    await turn.close();
    expect(message.streamed).toBe(true);
    expect(message.markdown).toBe("Half an answer");
    expect(blockTexts(message.blocks)[0]).toMatch(
      /^:warning: Sorry — I couldn't finish this answer \(connection reset\)/,
    );
    expect(actionIds(message.blocks)).toEqual(["coworker_retry"]);
  });

  it("keeps the stream's message and finishes with chat.update when the stream expires", async () => {
    const { output } = outputFor(fake, dm);
    const turn = output.beginTurn({ sessionId: "s1", turnId: "t1" });
    await turn.handle(ev.text("Part one. "));
    const message = await fake.waitFor(() => fake.state.botMessages(DM, dm.thread)[0], "stream start");
    message.streaming = false;
    await turn.handle(ev.text("Part two."));
    await turn.handle(ev.completed("Part one. Part two."));
    await turn.close();
    expect(fake.state.botMessages(DM, dm.thread)).toHaveLength(1);
    expect(blockTexts(message.blocks)).toEqual(["Part one. Part two."]);
  });

  it("asks to stop the turn when the person stops the stream in Slack", async () => {
    const harness = outputFor(fake, dm);
    const turn = harness.output.beginTurn({ sessionId: "s1", turnId: "t1" });
    await turn.handle(ev.text("Working on it"));
    const message = await fake.waitFor(() => fake.state.botMessages(DM, dm.thread)[0], "stream start");
    message.stoppedByUser = true;
    await turn.handle(ev.text(" more"));
    await fake.waitFor(() => harness.stops.length > 0, "stop request");
    expect(harness.stops[0]?.userId).toBe("U1");
    await turn.handle(ev.completed("", "interrupted"));
    await turn.close();
    expect(blockTexts(message.blocks).at(-1)).toBe("■ Stopped.");
  });
});

describe("limits and failures", () => {
  it("splits a long answer into ordered pages that each fit Slack's limits", async () => {
    const { output } = outputFor(fake, dm, { nativeStreaming: false });
    const paragraphs = Array.from({ length: 60 }, (_, i) => `Paragraph ${i}: ${"lorem ipsum ".repeat(30)}`);
    const answer = paragraphs.join("\n\n");
    const turn = output.beginTurn({ sessionId: "s1", turnId: "t1" });
    await turn.handle(ev.text(answer));
    await turn.handle(ev.completed(answer));
    await turn.close();
    const messages = fake.state.botMessages(DM, dm.thread);
    expect(messages.length).toBeGreaterThanOrEqual(3);
    const shown = messages.flatMap((m) => blockTexts(m.blocks)).join("\n\n");
    expect(shown.replace(/\s+/g, " ").trim()).toBe(answer.replace(/\s+/g, " ").trim());
    expect(fake.state.calls.every((c) => c.error === undefined)).toBe(true);
  });

  it("streams a long answer into pages a stretch at a time and ends with all of it, in order", async () => {
    const { output } = outputFor(fake, dm, { nativeStreaming: false });
    const paragraphs = Array.from(
      { length: 120 },
      (_, i) => `Paragraph ${i}: ${"lorem **ipsum** ".repeat(20)}`,
    );
    const answer = paragraphs.join("\n\n");
    const turn = output.beginTurn({ sessionId: "s1", turnId: "t1" });
    for (let at = 0; at < answer.length; at += 500) {
      await turn.handle(ev.text(answer.slice(at, at + 500)));
      if (at % 5_000 === 0) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(fake.state.callsOf("chat.update").length).toBeGreaterThan(0);
    await turn.handle(ev.completed(answer));
    await turn.close();
    const shown = fake.state
      .botMessages(DM, dm.thread)
      .flatMap((m) => blockTexts(m.blocks))
      .join("\n\n");
    expect(shown.replace(/\s+/g, " ").trim()).toBe(answer.replace(/\*\*/g, "*").replace(/\s+/g, " ").trim());
    expect(fake.state.calls.every((c) => c.error === undefined)).toBe(true);
  });

  it("waits out a rate-limited final update and still delivers the answer", async () => {
    const { output } = outputFor(fake, dm, { nativeStreaming: false });
    const turn = output.beginTurn({ sessionId: "s1", turnId: "t1" });
    await turn.handle(ev.text("first"));
    await fake.waitFor(() => fake.state.botMessages(DM, dm.thread)[0], "live post");
    fake.state.rateLimit("chat.update", 1, 1);
    await turn.handle(ev.text(" and final"));
    await turn.handle(ev.completed("first and final"));
    await turn.close();
    expect(fake.state.callsOf("chat.update").some((c) => c.status === 429)).toBe(true);
    expect(blockTexts(fake.state.botMessages(DM, dm.thread)[0]!.blocks)).toEqual(["first and final"]);
  });

  it("falls back to smaller pages, then plain text, when Slack refuses the layout", async () => {
    const { output } = outputFor(fake, dm, { nativeStreaming: false });
    fake.state.fail("chat.postMessage", "msg_blocks_too_long", "invalid_blocks");
    const turn = output.beginTurn({ sessionId: "s1", turnId: "t1" });
    await turn.handle(ev.completed("An answer that must not be lost."));
    await turn.close();
    const [message] = fake.state.botMessages(DM, dm.thread);
    expect(message?.blocks).toEqual([]);
    expect(message?.text).toBe("An answer that must not be lost.");
  });
});

describe("thinking indicator", () => {
  it("shows what the agent does while nothing is visible, and leaves clearing it to the posted reply", async () => {
    const { output } = outputFor(fake, dm, { nativeStreaming: false, firstFlushMs: 10_000 });
    const turn = output.beginTurn({ sessionId: "s1", turnId: "t1" });
    await fake.waitFor(() => fake.state.statuses.length === 1, "the first status");
    await turn.handle(ev.toolStart("c1", "npm test"));
    await fake.waitFor(() => fake.state.statuses.length === 2, "the second status");
    await new Promise((resolve) => setTimeout(resolve, 50));
    await turn.handle(ev.completed("ok"));
    await turn.close();
    expect(fake.state.statuses.map((s) => s.status)).toEqual(["is thinking…", "is running npm test…"]);
    const methods = fake.state.calls.map((c) => c.method);
    expect(methods.lastIndexOf("chat.postMessage")).toBeGreaterThan(
      methods.lastIndexOf("assistant.threads.setStatus"),
    );
  });

  it("shows no status once the reply is visible, however long the turn runs", async () => {
    const { output } = outputFor(fake, dm, { nativeStreaming: false, statusDelayMs: 50 });
    const turn = output.beginTurn({ sessionId: "s1", turnId: "t1" });
    await turn.handle(ev.text("Let me run the tests."));
    await fake.waitFor(() => fake.state.botMessages(DM, dm.thread)[0], "the live reply");
    await new Promise((resolve) => setTimeout(resolve, 100));
    await turn.handle(ev.toolStart("c1", "npm test"));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await turn.handle(ev.completed("done"));
    await turn.close();
    expect(fake.state.callsOf("assistant.threads.setStatus")).toHaveLength(0);
  });

  it("clears a shown status itself when the reply is a stream", async () => {
    const { output } = outputFor(fake, dm);
    const turn = output.beginTurn({ sessionId: "s1", turnId: "t1" });
    await fake.waitFor(() => fake.state.statuses.length === 1, "the first status");
    await turn.handle(ev.text("Streaming now"));
    await fake.waitFor(() => fake.state.statuses.length === 2, "the status cleared");
    await turn.handle(ev.completed("Streaming now"));
    await turn.close();
    expect(fake.state.statuses.map((s) => s.status)).toEqual(["is thinking…", ""]);
    expect(fake.state.callsOf("chat.startStream")).toHaveLength(1);
  });

  it("falls back to a reaction where the status is refused", async () => {
    fake.state.assistantStatus = "method_not_supported_for_channel_type";
    const { output } = outputFor(fake, dm, { nativeStreaming: false });
    const turn = output.beginTurn({ sessionId: "s1", turnId: "t1" });
    await turn.handle(ev.completed("ok"));
    await turn.close();
    expect(fake.state.reactions).toEqual([
      { channel: DM, ts: dm.thread, name: "hourglass_flowing_sand", added: true },
      { channel: DM, ts: dm.thread, name: "hourglass_flowing_sand", added: false },
    ]);
  });
});
