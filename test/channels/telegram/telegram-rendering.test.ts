import { afterEach, describe, expect, it } from "vitest";
import { type AgentEvent, agentEvent } from "../../../src/core/events.js";
import type { ThreadOutput } from "../../../src/core/thread-output.js";
import { parseTelegramHtml } from "../../fakes/fake-telegram/html-parser.js";
import type { FakeTelegram, RecordedCall } from "../../fakes/fake-telegram/fake-telegram.js";
import { ALICE, ALICE_DM, FAST_TIMING, FORUM, GROUP, type Harness, startHarness } from "./harness.js";
import { permissionRequired } from "../shared/agent-events.js";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

type Step = AgentEvent | (() => Promise<unknown>);

/** Run one scripted turn on a thread output: events, with waits in between where given. */
async function playTurn(output: ThreadOutput, steps: readonly Step[]): Promise<void> {
  const renderer = output.beginTurn({ sessionId: "s1", turnId: `t-${Math.random()}` });
  for (const step of steps) {
    if (typeof step === "function") await step();
    else await renderer.handle(step);
  }
  await renderer.close();
}

const delta = (text: string) => agentEvent({ type: "text-delta", delta: text });
const done = (finalText: string, status: "completed" | "interrupted" = "completed") =>
  agentEvent({ type: "turn-completed", status, iterations: 1, finalText, usage: undefined });

function visible(call: RecordedCall): string {
  const parsed = call.params.parse_mode === "HTML" ? parseTelegramHtml(call.params.text) : undefined;
  if (parsed && !parsed.ok) throw new Error(parsed.description);
  return parsed?.ok ? parsed.text : call.params.text;
}

function successful(tg: FakeTelegram, method: string): RecordedCall[] {
  return tg.callsOf(method).filter((call) => !call.error);
}

describe("Telegram channel: rendering turns", () => {
  it("streams a DM as a draft preview and ends with exactly one real message", async () => {
    harness = await startHarness();
    const { tg, service } = harness;
    service.onReceive = (_message, output) =>
      playTurn(output, [
        delta("Hel"),
        () => tg.waitFor(() => tg.state.drafts.length >= 1),
        delta("lo **world**"),
        () => tg.waitFor(() => tg.state.drafts.some((draft) => draft.text === "Hello world")),
        done("Hello **world**"),
      ]);
    const { message } = tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "hi" });
    await tg.waitFor(() => successful(tg, "sendMessage").length === 1);
    await Promise.all(service.turns);
    const [final] = successful(tg, "sendMessage");
    expect(visible(final!)).toBe("Hello world");
    expect(final!.params.reply_parameters).toEqual({
      message_id: message.message_id,
      allow_sending_without_reply: true,
    });
    const drafts = tg.callsOf("sendMessageDraft");
    expect(new Set(drafts.map((call) => call.params.draft_id)).size).toBe(1);
    expect(drafts.every((call) => call.params.can_stop === true)).toBe(true);
    expect(tg.callsOf("editMessageText")).toHaveLength(0);
    expect(tg.state.botMessages(ALICE.id)).toHaveLength(1);
  });

  it("falls back to send + edit with a Stop button where drafts are unsupported, and remembers", async () => {
    harness = await startHarness({}, { draftsSupported: false });
    const { tg, service } = harness;
    const script = (output: ThreadOutput) =>
      playTurn(output, [
        delta("first part"),
        () => tg.waitFor(() => successful(tg, "sendMessage").length >= 1),
        delta(" and more"),
        () => tg.waitFor(() => successful(tg, "editMessageText").length >= 1),
        done("first part and more"),
      ]);
    service.onReceive = (_message, output) => script(output);
    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "go" });
    await tg.waitFor(() => service.turns.length === 1);
    await Promise.all(service.turns);
    const [live] = tg.state.botMessages(ALICE.id);
    expect(tg.state.botMessages(ALICE.id)).toHaveLength(1);
    expect(live!.text).toBe("first part and more");
    expect(live!.reply_markup).toBeUndefined();
    const withStop = successful(tg, "editMessageText").filter((call) => call.params.reply_markup);
    expect(withStop[0]?.params.reply_markup.inline_keyboard[0][0]).toMatchObject({
      text: "⏹ Stop",
      callback_data: "c:stop",
    });
    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "again" });
    await tg.waitFor(() => service.turns.length === 2);
    await Promise.all(service.turns);
    expect(tg.callsOf("sendMessageDraft")).toHaveLength(1);
  });

  it("in groups edits the live reply no faster than the group interval and skips identical views", async () => {
    harness = await startHarness();
    const { tg, service } = harness;
    service.onReceive = (_message, output) =>
      playTurn(output, [
        delta("one"),
        () => tg.waitFor(() => successful(tg, "sendMessage").length === 1),
        delta(" two"),
        agentEvent({ type: "tool-output-delta", callId: "c", name: "x", delta: "noise" }),
        () => tg.waitFor(() => successful(tg, "editMessageText").length === 1),
        agentEvent({ type: "tool-output-delta", callId: "c", name: "x", delta: "noise" }),
        delta(" three"),
        () => tg.waitFor(() => successful(tg, "editMessageText").length === 2),
        done("one two three"),
      ]);
    const { message } = tg.sendUserMessage({ chat: GROUP, from: ALICE, text: "@coworker_bot count" });
    await tg.waitFor(() => service.turns.length === 1);
    await Promise.all(service.turns);
    expect(tg.callsOf("sendMessageDraft")).toHaveLength(0);
    const writes = [...successful(tg, "sendMessage"), ...successful(tg, "editMessageText")].sort(
      (a, b) => a.at - b.at,
    );
    expect(writes.map(visible)).toEqual(["one", "one two", "one two three", "one two three"]);
    for (let i = 1; i < writes.length; i++) {
      expect(writes[i]!.at - writes[i - 1]!.at).toBeGreaterThanOrEqual(FAST_TIMING.group.intervalMs - 5);
    }
    expect(writes[0]!.params.reply_parameters.message_id).toBe(message.message_id);
    expect(tg.state.botMessages(GROUP.id)).toHaveLength(1);
    expect(tg.state.botMessages(GROUP.id)[0]!.reply_markup).toBeUndefined();
  });

  it("keeps a forum topic's replies in the topic: every send and chat action carries its thread id", async () => {
    harness = await startHarness();
    const { tg, service } = harness;
    service.onReceive = (message, output) =>
      playTurn(output, [
        // A person who sees nothing for a second is told the bot is typing.
        () => tg.waitFor(() => successful(tg, "sendChatAction").length >= 1),
        agentEvent({
          type: "tool-call-started",
          callId: "c1",
          name: "read_file",
          args: {},
          preview: "notes.md",
        }),
        () =>
          tg.waitFor(() => successful(tg, "sendMessage").some((call) => call.params.chat_id === FORUM.id)),
        delta(`answer for ${message.target.thread}`),
        () => tg.waitFor(() => successful(tg, "editMessageText").length >= 1),
        done(`answer for ${message.target.thread}`),
      ]);
    tg.sendUserMessage({ chat: FORUM, from: ALICE, threadId: 21, text: "@coworker_bot hi" });
    await tg.waitFor(() => service.turns.length === 1);
    await Promise.all(service.turns);
    const forumCalls = tg.calls.filter((call) => call.params.chat_id === FORUM.id);
    const sends = forumCalls.filter((call) => call.method !== "editMessageText");
    expect(sends.map((call) => call.method)).toEqual(
      expect.arrayContaining(["sendMessage", "sendChatAction"]),
    );
    for (const call of sends) expect(call.params.message_thread_id).toBe(21);
    for (const edit of forumCalls.filter((call) => call.method === "editMessageText")) {
      expect(tg.state.message(FORUM.id, edit.params.message_id)?.message_thread_id).toBe(21);
    }
    expect(tg.state.botMessages(FORUM.id, 21).at(-1)!.text).toBe("🔧 read_file ⏳\n\nanswer for 21");
  });

  it.each([
    ["sendMessage", "its first preview"],
    ["editMessageText", "an edit of its preview"],
  ])(
    "stops a turn's previews when its forum topic is closed (%s: %s), said once in the log",
    async (method) => {
      harness = await startHarness();
      const { tg, service } = harness;
      const logged = (msg: string) => harness!.logs().filter((line) => line.msg === msg);
      const stopped = "telegram: topic closed or deleted; previews stopped for this turn";
      // The topic is closed from the first call of `method` on, for the rest of the turn.
      const closeTopic = async () => tg.failNext(method, 400, "Bad Request: TOPIC_CLOSED", 10);
      const opening: Step[] =
        method === "sendMessage"
          ? [closeTopic, delta("first second")]
          : [
              delta("first"),
              () => tg.waitFor(() => successful(tg, "sendMessage").length === 1),
              closeTopic,
              delta(" second"),
            ];
      service.onReceive = (_message, output) =>
        playTurn(output, [
          ...opening,
          () => tg.waitFor(() => logged(stopped).length === 1),
          delta(" third"),
          delta(" fourth"),
          done("first second third fourth"),
        ]);
      tg.sendUserMessage({ chat: FORUM, from: ALICE, threadId: 31, text: "@coworker_bot hi" });
      await tg.waitFor(() => service.turns.length === 1);
      await Promise.all(service.turns);
      expect(logged(stopped)).toHaveLength(1);
      expect(logged(stopped)[0]).toMatchObject({ level: 40, chatId: FORUM.id, topicId: 31 });
      expect(logged("telegram preview failed")).toHaveLength(0);
      // One preview call met the closed topic; after it only the final answer was tried (not delivered).
      expect(tg.callsOf(method).filter((call) => call.error)).toHaveLength(2);
      expect(logged("telegram: topic closed or deleted; answer not delivered")).toHaveLength(1);
    },
  );

  it("splits a 10,000-character answer into ordered messages within the limit", async () => {
    harness = await startHarness();
    const { tg, service } = harness;
    const paragraphs = Array.from(
      { length: 100 },
      (_, i) => `Paragraph ${i}: ${"lorem ipsum ".repeat(8).trim()}`,
    );
    const answer = paragraphs.join("\n\n");
    service.onReceive = (_message, output) =>
      playTurn(output, [
        delta(answer.slice(0, 5000)),
        () => tg.waitFor(() => successful(tg, "sendMessage").length === 1),
        delta(answer.slice(5000)),
        done(answer),
      ]);
    tg.sendUserMessage({ chat: GROUP, from: ALICE, text: "@coworker_bot long" });
    await tg.waitFor(() => service.turns.length === 1);
    await Promise.all(service.turns);
    expect(answer.length).toBeGreaterThan(10_000);
    const messages = tg.state.botMessages(GROUP.id);
    expect(messages.length).toBe(3);
    for (const stored of messages) expect(stored.text.length).toBeLessThanOrEqual(4096);
    expect(messages.map((stored) => stored.text).join("\n\n")).toBe(answer);
    expect(tg.calls.filter((call) => call.error === "Bad Request: message is too long")).toHaveLength(0);
  });

  it("re-sends as plain text when Telegram cannot parse the HTML, and retries a 429", async () => {
    harness = await startHarness();
    const { tg, service } = harness;
    service.onReceive = (_message, output) => playTurn(output, [done("**bold** answer")]);
    tg.failNext(
      "sendMessage",
      400,
      `Bad Request: can't parse entities: Unsupported start tag "x" at byte offset 0`,
    );
    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "one" });
    await tg.waitFor(() => tg.state.botMessages(ALICE.id).length === 1);
    const [plain] = successful(tg, "sendMessage");
    expect(plain!.params.parse_mode).toBeUndefined();
    expect(plain!.params.text).toBe("bold answer");

    tg.rateLimitNext("sendMessage", 1);
    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "two" });
    await tg.waitFor(() => tg.state.botMessages(ALICE.id).length === 2);
    const limited = tg.callsOf("sendMessage").find((call) => call.error?.startsWith("Too Many Requests"));
    const retried = successful(tg, "sendMessage")[1]!;
    expect(limited).toBeDefined();
    expect(retried.at - limited!.at).toBeGreaterThanOrEqual(990);
  });

  it("treats 'message is not modified' as success", async () => {
    harness = await startHarness();
    const { tg, service } = harness;
    tg.failNext(
      "editMessageText",
      400,
      "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message",
    );
    service.onReceive = (_message, output) =>
      playTurn(output, [
        delta("partial"),
        () => tg.waitFor(() => successful(tg, "sendMessage").length === 1),
        done("partial and final"),
      ]);
    tg.sendUserMessage({ chat: GROUP, from: ALICE, text: "@coworker_bot go" });
    await tg.waitFor(() => service.turns.length === 1);
    await Promise.all(service.turns);
    // The final edit met "not modified": taken as done, no duplicate message, nothing logged as an error.
    expect(tg.state.botMessages(GROUP.id)).toHaveLength(1);
    expect(harness.logs().filter((line) => Number(line.level) >= 50)).toHaveLength(0);
  });

  it("shows the plan, tool lines and what the turn waits for, then a compact tool summary", async () => {
    harness = await startHarness();
    const { tg, service } = harness;
    service.onReceive = (_message, output) =>
      playTurn(output, [
        agentEvent({
          type: "plan-updated",
          steps: [
            { title: "Look", status: "done" },
            { title: "Fix", status: "in_progress" },
          ],
        }),
        agentEvent({ type: "tool-call-started", callId: "a", name: "bash", args: {}, preview: "npm test" }),
        agentEvent({
          type: "tool-call-finished",
          callId: "a",
          name: "bash",
          status: "ok",
          outputPreview: "",
          files: [],
          durationMs: 1200,
        }),
        permissionRequired("b"),
        () => tg.waitFor(() => tg.state.botMessages(GROUP.id)[0]?.text.includes("Waiting for approval")),
        done("Fixed."),
      ]);
    tg.sendUserMessage({ chat: GROUP, from: ALICE, text: "@coworker_bot fix" });
    await tg.waitFor(() => service.turns.length === 1);
    await Promise.all(service.turns);
    const live = tg.callsOf("sendMessage").map(visible)[0];
    expect(live).toBe("✅ Look\n▶️ Fix\n✓ bash npm test · 1.2 s\n⏸ Waiting for approval: write_file");
    expect(tg.state.botMessages(GROUP.id)[0]!.text).toBe("🔧 bash ✓\n\nFixed.");
  });
});
