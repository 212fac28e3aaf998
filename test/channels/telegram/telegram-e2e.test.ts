/**
 * End to end: the real grammY bot and runner against the fake Bot API, the real SessionManager
 * and TurnEngine, and the fake OpenAI-compatible server as the model. Questions (ask_user) have
 * telegram-questions-e2e.test.ts.
 */
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type { FakeHandler } from "../../fakes/fake-openai.js";
import { cardWith, lastMessage, lastUserText } from "./e2e-helpers.js";
import { ALICE, ALICE_DM, BOB, FORUM, GROUP, MALLORY, MALLORY_DM } from "./harness.js";
import { type Stack, startStack } from "./stack.js";

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

/** First a write_note call (needs approval), then a text answer once the tool result is in. */
const writeThenAnswer: FakeHandler = ({ body }) =>
  lastMessage(body).role === "tool"
    ? { text: "noted" }
    : { toolCalls: [{ name: "write_note", arguments: JSON.stringify({ text: lastUserText(body) }) }] };

describe("Telegram end to end", () => {
  it("answers a DM with one real message threaded to it, and the next one to the next", async () => {
    stack = await startStack({ allowedUsers: [ALICE.id] });
    const { tg, openai } = stack;
    const first = tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "hello" });
    const answer = await tg.waitFor(() => tg.state.botMessages(ALICE.id)[0]);
    expect(answer.text).toBe('You said: "hello"');
    expect(answer.reply_to_message_id).toBe(first.message.message_id);
    const second = tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "again" });
    const next = await tg.waitFor(() => tg.state.botMessages(ALICE.id)[1]);
    expect(next.text).toBe('You said: "again"');
    expect(next.reply_to_message_id).toBe(second.message.message_id);
    expect(openai.requests).toHaveLength(2);
    expect(tg.callsOf("sendMessage").filter((call) => !call.error)).toHaveLength(2);
  });

  it("threads each queued follow-up's answer to its own message, not to the latest one", async () => {
    let queued = 0;
    let bothQueued: () => void = () => undefined;
    const queuedTwice = new Promise<void>((resolve) => {
      bothQueued = resolve;
    });
    const log = pino(
      { level: "debug" },
      {
        write(line: string) {
          const entry = JSON.parse(line) as { msg?: string; result?: { status?: string } };
          if (
            entry.msg === "telegram: message recorded" &&
            entry.result?.status === "queued" &&
            ++queued === 2
          )
            bothQueued();
        },
      },
    );
    const handler: FakeHandler = ({ body }) => {
      if (lastMessage(body).role === "tool") return { text: "noted" };
      const text = lastUserText(body);
      return text === "note this"
        ? { toolCalls: [{ name: "write_note", arguments: JSON.stringify({ text }) }] }
        : { text: `You said: "${text}"` };
    };
    stack = await startStack({
      allowedUsers: [ALICE.id],
      handler,
      logger: log,
      extend: () => ({
        manager: {
          defaults: {
            model: "fake-model",
            provider: "openai",
            mode: "interactive",
            maxSteps: 10,
            queueMode: "followup",
          },
        },
      }),
    });
    const { tg } = stack;
    const first = tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "note this" });
    const card = await tg.waitFor(() => cardWith(stack!, ALICE.id, "Approve"));
    const second = tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "second" });
    const third = tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "third" });
    await queuedTwice;
    tg.pressButton({
      chat: ALICE_DM,
      from: ALICE,
      messageId: card.message_id,
      data: tg.buttonData(card, "Approve"),
    });
    const answerTo = (text: string) =>
      tg.waitFor(() => tg.state.botMessages(ALICE.id).find((m) => m.text.endsWith(text)));
    expect((await answerTo("noted")).reply_to_message_id).toBe(first.message.message_id);
    expect((await answerTo('You said: "second"')).reply_to_message_id).toBe(second.message.message_id);
    expect((await answerTo('You said: "third"')).reply_to_message_id).toBe(third.message.message_id);
  });

  it("never calls the model for a user who is not allowed", async () => {
    stack = await startStack({ allowedUsers: [ALICE.id] });
    const { tg, openai } = stack;
    tg.sendUserMessage({ chat: MALLORY_DM, from: MALLORY, text: "hello" });
    const refusal = await tg.waitFor(() => tg.state.botMessages(MALLORY.id)[0]);
    expect(refusal.text).toContain(String(MALLORY.id));
    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "me" });
    await tg.waitFor(() => tg.state.botMessages(ALICE.id)[0]);
    expect(openai.requests.map(lastUserText)).toEqual(["me"]);
  });

  it("in a group answers a mention, threaded to it, and ignores the rest", async () => {
    stack = await startStack({ allowedUsers: [ALICE.id] });
    const { tg, openai } = stack;
    tg.sendUserMessage({ chat: GROUP, from: ALICE, text: "talking among ourselves" });
    const { message } = tg.sendUserMessage({ chat: GROUP, from: ALICE, text: "@coworker_bot ping" });
    const answer = await tg.waitFor(() =>
      tg.state.botMessages(GROUP.id).find((m) => m.text.startsWith("You said")),
    );
    expect(answer.text).toBe('You said: "ping"');
    expect(answer.reply_to_message_id).toBe(message.message_id);
    expect(openai.requests.map(lastUserText)).toEqual(["ping"]);
  });

  it("keeps forum topics apart, and every send and chat action in the topic it belongs to", async () => {
    stack = await startStack({ allowedUsers: [ALICE.id] });
    const { tg, openai } = stack;
    tg.sendUserMessage({ chat: FORUM, from: ALICE, threadId: 11, text: "@coworker_bot alpha" });
    await tg.waitFor(() => tg.state.botMessages(FORUM.id, 11)[0]);
    tg.sendUserMessage({ chat: FORUM, from: ALICE, threadId: 12, text: "@coworker_bot beta" });
    await tg.waitFor(() => tg.state.botMessages(FORUM.id, 12)[0]);
    tg.sendUserMessage({ chat: FORUM, from: ALICE, threadId: 11, text: "@coworker_bot gamma" });
    await tg.waitFor(() => tg.state.botMessages(FORUM.id, 11)[1]);
    const historyOf = (index: number) =>
      openai.requests[index]!.messages.map((m: { content?: unknown }) => String(m.content));
    expect(historyOf(2).join(" ")).toContain("alpha");
    expect(historyOf(2).join(" ")).not.toContain("beta");
    expect(historyOf(1).join(" ")).not.toContain("alpha");
    const forumCalls = tg.calls.filter(
      (call) => call.params.chat_id === FORUM.id && call.method !== "editMessageText",
    );
    expect(forumCalls.length).toBeGreaterThanOrEqual(3);
    for (const call of forumCalls) expect([11, 12]).toContain(call.params.message_thread_id);
    expect(
      tg.state.botMessages(FORUM.id).every((m) => m.message_thread_id === 11 || m.message_thread_id === 12),
    ).toBe(true);
  });

  it.each(["Bad Request: TOPIC_CLOSED", "Bad Request: message thread not found"])(
    "names a topic closed or deleted mid-turn in the log (%s), posts nowhere else, and answers once it is back",
    async (description) => {
      const lines: Record<string, unknown>[] = [];
      const logger = pino({ level: "debug" }, { write: (line: string) => lines.push(JSON.parse(line)) });
      stack = await startStack({ allowedUsers: [ALICE.id], logger });
      const { tg } = stack;
      tg.failNext("sendMessage", 400, description, 1);
      tg.sendUserMessage({ chat: FORUM, from: ALICE, threadId: 11, text: "@coworker_bot alpha" });
      const warning = await tg.waitFor(() =>
        lines.find((line) => line.msg === "telegram: topic closed or deleted; answer not delivered"),
      );
      expect(warning).toMatchObject({ level: 40, chatId: FORUM.id, topicId: 11 });
      expect(String(warning.err)).toContain(description);
      expect(lines.some((line) => line.msg === "telegram: could not deliver the final answer")).toBe(false);
      // Not in General, nor anywhere else.
      expect(tg.state.botMessages(FORUM.id)).toHaveLength(0);
      tg.sendUserMessage({ chat: FORUM, from: ALICE, threadId: 11, text: "@coworker_bot beta" });
      const answer = await tg.waitFor(() => tg.state.botMessages(FORUM.id, 11)[0]);
      expect(answer.text).toBe('You said: "beta"');
    },
  );

  it("approval: another user's press is refused with an alert, the requester's runs the tool", async () => {
    stack = await startStack({ allowedUsers: [ALICE.id, BOB.id], handler: writeThenAnswer });
    const { tg, runs } = stack;
    tg.sendUserMessage({ chat: GROUP, from: ALICE, text: "@coworker_bot remember milk" });
    const card = await tg.waitFor(() => cardWith(stack!, GROUP.id, "Approve"));
    const approve = tg.buttonData(card, "Approve");
    const bobs = tg.pressButton({ chat: GROUP, from: BOB, messageId: card.message_id, data: approve });
    await tg.waitFor(() => tg.state.queries.get(bobs.callback_query.id)?.answer);
    expect(tg.state.queries.get(bobs.callback_query.id)!.answer!.show_alert).toBe(true);
    expect(runs.runs).toHaveLength(0);
    const alices = tg.pressButton({ chat: GROUP, from: ALICE, messageId: card.message_id, data: approve });
    await tg.waitFor(() => tg.state.botMessages(GROUP.id).some((m) => m.text.endsWith("noted")));
    expect(tg.state.queries.get(alices.callback_query.id)!.answer!.show_alert).toBe(false);
    expect(runs.runs.map((run) => run.args)).toEqual([{ text: "remember milk" }]);
    const decided = tg.state.message(GROUP.id, card.message_id)!;
    expect(decided.reply_markup).toBeUndefined();
    expect(decided.text).toContain("@alice");
    const late = tg.pressButton({ chat: GROUP, from: ALICE, messageId: card.message_id, data: approve });
    await tg.waitFor(() => tg.state.queries.get(late.callback_query.id)?.answer);
    expect(tg.state.queries.get(late.callback_query.id)!.answer!.show_alert).toBe(true);
    expect(runs.runs).toHaveLength(1);
  });

  it("approval by a configured approver who is not the requester", async () => {
    stack = await startStack({
      allowedUsers: [ALICE.id, BOB.id],
      handler: writeThenAnswer,
      approvers: [`telegram:${BOB.id}`],
    });
    const { tg, runs } = stack;
    tg.sendUserMessage({ chat: GROUP, from: ALICE, text: "@coworker_bot remember eggs" });
    const card = await tg.waitFor(() => cardWith(stack!, GROUP.id, "Approve"));
    tg.pressButton({
      chat: GROUP,
      from: BOB,
      messageId: card.message_id,
      data: tg.buttonData(card, "Approve"),
    });
    await tg.waitFor(() => tg.state.botMessages(GROUP.id).some((m) => m.text.endsWith("noted")));
    expect(runs.runs).toHaveLength(1);
    expect(tg.state.message(GROUP.id, card.message_id)!.text).toContain("@bob");
  });

  it("delivers a 10,000-character answer as ordered messages within Telegram's limit", async () => {
    const answer = Array.from({ length: 90 }, (_, i) => `Line ${i}: ${"data ".repeat(21).trim()}`).join(
      "\n\n",
    );
    stack = await startStack({
      allowedUsers: [ALICE.id],
      handler: () => ({ text: answer.match(/.{1,500}/gs)! }),
    });
    const { tg } = stack;
    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "long please" });
    await tg.waitFor(() => tg.state.botMessages(ALICE.id).length === 3);
    const texts = tg.state.botMessages(ALICE.id).map((m) => m.text);
    expect(answer.length).toBeGreaterThan(10_000);
    for (const text of texts) expect(text.length).toBeLessThanOrEqual(4096);
    expect(texts.join("\n\n")).toBe(answer);
  });

  it("retries a 429 honouring retry_after and still answers once", async () => {
    stack = await startStack({ allowedUsers: [ALICE.id] });
    const { tg } = stack;
    tg.rateLimitNext("sendMessage", 1);
    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "rate me" });
    await tg.waitFor(() => tg.state.botMessages(ALICE.id)[0]);
    expect(tg.callsOf("sendMessage").map((call) => call.error ?? "ok")).toEqual([
      "Too Many Requests: retry after 1",
      "ok",
    ]);
    expect(tg.state.botMessages(ALICE.id)).toHaveLength(1);
  });

  it("answers bad or unknown callback data politely and changes nothing", async () => {
    stack = await startStack({ allowedUsers: [ALICE.id] });
    const { tg, openai } = stack;
    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "hi" });
    const answer = await tg.waitFor(() => tg.state.botMessages(ALICE.id)[0]);
    const garbage = tg.pressButton({
      chat: ALICE_DM,
      from: ALICE,
      messageId: answer.message_id,
      data: "%%garbage%%",
    });
    const unknown = tg.pressButton({
      chat: ALICE_DM,
      from: ALICE,
      messageId: answer.message_id,
      data: "k:nosuchpending:once",
    });
    await tg.waitFor(
      () =>
        tg.state.queries.get(garbage.callback_query.id)?.answer &&
        tg.state.queries.get(unknown.callback_query.id)?.answer,
    );
    expect(tg.state.queries.get(garbage.callback_query.id)!.answer!.text).toBe(
      "This button is no longer active.",
    );
    expect(tg.state.queries.get(unknown.callback_query.id)!.answer!.text!.length).toBeGreaterThan(0);
    expect(tg.state.message(ALICE.id, answer.message_id)!.edits).toBe(0);
    expect(tg.state.botMessages(ALICE.id)).toHaveLength(1);
    expect(openai.requests).toHaveLength(1);
  });

  it("puts a Retry button under a failed turn; pressing it runs the turn again", async () => {
    let calls = 0;
    stack = await startStack({
      allowedUsers: [ALICE.id],
      handler: ({ body }) =>
        ++calls === 1 ? { status: 500 } : { text: `second try: ${lastUserText(body)}` },
    });
    const { tg } = stack;
    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "flaky" });
    const failed = await tg.waitFor(() => cardWith(stack!, ALICE.id, "🔁 Retry"));
    expect(failed.text).toContain("⚠️ The turn failed");
    await stack.manager.idle();
    const press = tg.pressButton({
      chat: ALICE_DM,
      from: ALICE,
      messageId: failed.message_id,
      data: tg.buttonData(failed, "Retry"),
    });
    const answer = await tg.waitFor(() =>
      tg.state.botMessages(ALICE.id).find((m) => m.text === "second try: flaky"),
    );
    expect(answer).toBeDefined();
    expect(tg.state.queries.get(press.callback_query.id)!.answer!.show_alert).toBe(false);
    await tg.waitFor(() => tg.state.message(ALICE.id, failed.message_id)!.reply_markup === undefined);
  });

  it("in a group, refuses another member's Retry with an alert naming the requester; the requester's runs it", async () => {
    let calls = 0;
    stack = await startStack({
      allowedUsers: [ALICE.id, BOB.id],
      handler: ({ body }) =>
        ++calls === 1 ? { status: 500 } : { text: `second try: ${lastUserText(body)}` },
    });
    const { tg } = stack;
    tg.sendUserMessage({ chat: GROUP, from: ALICE, text: "@coworker_bot flaky" });
    const failed = await tg.waitFor(() => cardWith(stack!, GROUP.id, "🔁 Retry"));
    await stack.manager.idle();
    const retry = tg.buttonData(failed, "Retry");
    const bobs = tg.pressButton({ chat: GROUP, from: BOB, messageId: failed.message_id, data: retry });
    const refused = await tg.waitFor(() => tg.state.queries.get(bobs.callback_query.id)?.answer);
    expect(refused).toMatchObject({
      text: `Only @alice (id ${ALICE.id}) or a configured approver can retry this.`,
      show_alert: true,
    });
    expect(tg.state.message(GROUP.id, failed.message_id)!.reply_markup).toBeDefined();
    expect(calls).toBe(1);
    tg.pressButton({ chat: GROUP, from: ALICE, messageId: failed.message_id, data: retry });
    const answer = await tg.waitFor(() =>
      tg.state.botMessages(GROUP.id).find((m) => m.text.startsWith("second try:")),
    );
    expect(answer.text).toContain("flaky");
  });

  it("resumes a turn parked at an approval after a restart when the old card is pressed", async () => {
    stack = await startStack({ allowedUsers: [ALICE.id], handler: writeThenAnswer });
    stack.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "keep this" });
    await stack.tg.waitFor(() => cardWith(stack!, ALICE.id, "Approve"));
    stack = await stack.restart();
    const { tg, runs } = stack;
    const card = cardWith(stack, ALICE.id, "Approve")!;
    tg.pressButton({
      chat: ALICE_DM,
      from: ALICE,
      messageId: card.message_id,
      data: tg.buttonData(card, "Approve"),
    });
    const done = await tg.waitFor(() => tg.state.botMessages(ALICE.id).find((m) => m.text.endsWith("noted")));
    expect(done.text).toContain("noted");
    expect(runs.runs.map((run) => run.args)).toEqual([{ text: "keep this" }]);
    expect(tg.state.message(ALICE.id, card.message_id)!.reply_markup).toBeUndefined();
  });
});
