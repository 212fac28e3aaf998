/**
 * Questions (ask_user) on Telegram end to end: the real grammY bot against the fake Bot API, the
 * real SessionManager and TurnEngine, the fake OpenAI-compatible server as the model. Answered by
 * a button or a typed reply; a long answer settles the card; a card whose keyboard Telegram
 * refuses goes, and stays, without buttons, its options written out per question.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { FakeHandler } from "../../fakes/fake-openai.js";
import { cardWith, lastMessage } from "./e2e-helpers.js";
import { ALICE, ALICE_DM, GROUP } from "./harness.js";
import { type Stack, startStack } from "./stack.js";

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const askThenAnswer: FakeHandler = ({ body }) =>
  lastMessage(body).role === "tool"
    ? { text: `you chose ${String(lastMessage(body).content).match(/red|blue|green/)?.[0]}` }
    : {
        toolCalls: [
          {
            name: "ask_user",
            arguments: JSON.stringify({ question: "Which color?", options: ["red", "blue"] }),
          },
        ],
      };

describe("Telegram questions end to end", () => {
  it("questions: answered by a button, or by typing the answer", async () => {
    stack = await startStack({ allowedUsers: [ALICE.id], handler: askThenAnswer });
    const { tg, openai } = stack;
    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "pick one" });
    const card = await tg.waitFor(() => cardWith(stack!, ALICE.id, "blue"));
    tg.pressButton({
      chat: ALICE_DM,
      from: ALICE,
      messageId: card.message_id,
      data: tg.buttonData(card, "blue"),
    });
    await tg.waitFor(() => tg.state.botMessages(ALICE.id).some((m) => m.text === "you chose blue"));
    expect(tg.state.message(ALICE.id, card.message_id)!.reply_markup).toBeUndefined();

    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "pick again" });
    await tg.waitFor(() => tg.state.botMessages(ALICE.id).filter((m) => m.reply_markup).length === 1);
    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "green" });
    await tg.waitFor(() => tg.state.botMessages(ALICE.id).some((m) => m.text === "you chose green"));
    expect(openai.requests).toHaveLength(4);
  });

  it("a long typed answer settles the card: its buttons go and its outcome shows the answer cut", async () => {
    stack = await startStack({ allowedUsers: [ALICE.id], handler: askThenAnswer });
    const { tg } = stack;
    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "pick one" });
    const card = await tg.waitFor(() => cardWith(stack!, ALICE.id, "blue"));
    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: `green — ${"because ".repeat(340)}` });
    await tg.waitFor(() => tg.state.botMessages(ALICE.id).some((m) => m.text === "you chose green"));
    const settled = await tg.waitFor(() => {
      const now = tg.state.message(ALICE.id, card.message_id);
      return now?.text.includes("Answered by") ? now : undefined;
    });
    expect(settled.reply_markup).toBeUndefined();
    expect(settled.text).toMatch(/\nAnswered by [^\n]*: green — because [a-z ]*…$/);
  });

  it("a question whose keyboard Telegram refuses is posted without buttons, its options written out, and answered by a reply", async () => {
    stack = await startStack({ allowedUsers: [ALICE.id], handler: askThenAnswer });
    const { tg } = stack;
    tg.failNext("sendMessage", 400, "Bad Request: reply markup is too long");
    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "pick one" });
    const card = await tg.waitFor(() =>
      tg.state.botMessages(ALICE.id).find((m) => m.text.includes("Which color?")),
    );
    expect(card.reply_markup).toBeUndefined();
    expect(card.force_reply).toEqual({ selective: true });
    expect(card.text).toContain("Options: red · blue. Reply to this message with your answer.");
    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "blue", replyTo: card.message_id });
    await tg.waitFor(() => tg.state.botMessages(ALICE.id).some((m) => m.text === "you chose blue"));
  });

  it("a question without options in a group asks for a reply, and the asker's reply answers it", async () => {
    const handler: FakeHandler = ({ body }) =>
      lastMessage(body).role === "tool"
        ? { text: `got: ${String(lastMessage(body).content).slice(0, 80)}` }
        : {
            toolCalls: [
              {
                name: "ask_user",
                arguments: JSON.stringify({ question: "What should the release be called?" }),
              },
            ],
          };
    stack = await startStack({ allowedUsers: [ALICE.id], handler });
    const { tg } = stack;
    const asked = tg.sendUserMessage({ chat: GROUP, from: ALICE, text: "@coworker_bot name the release" });
    const card = await tg.waitFor(() =>
      tg.state.botMessages(GROUP.id).find((m) => m.text.includes("release be called")),
    );
    expect(card.text).toContain("Reply to this message with your answer.");
    // The app opens a reply to the card for Alice (the card replies to her message: selective).
    expect(card.force_reply).toEqual({ selective: true });
    expect(card.reply_to_message_id).toBe(asked.message.message_id);
    expect(card.reply_markup).toBeUndefined();
    tg.sendUserMessage({ chat: GROUP, from: ALICE, text: "Aurora", replyTo: card.message_id });
    await tg.waitFor(() => tg.state.botMessages(GROUP.id).some((m) => m.text.startsWith("got:")));
    expect(tg.state.botMessages(GROUP.id).find((m) => m.text.startsWith("got:"))?.text).toContain("Aurora");
    await tg.waitFor(() => tg.state.message(GROUP.id, card.message_id)?.text.includes("Answered by"));
  });

  it("a group whose keyboard Telegram refused writes out each question's options, and its updates go without the keyboard too", async () => {
    const handler: FakeHandler = ({ body }) =>
      lastMessage(body).role === "tool"
        ? { text: "both answered" }
        : {
            toolCalls: [
              {
                name: "ask_user",
                arguments: JSON.stringify({
                  questions: [
                    { question: "Which color?", options: ["red", "blue"] },
                    { question: "Which size?", options: ["S", "L"] },
                  ],
                }),
              },
            ],
          };
    stack = await startStack({ allowedUsers: [ALICE.id], handler });
    const { tg } = stack;
    tg.failNext("sendMessage", 400, "Bad Request: reply markup is too long");
    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "pick" });
    const card = await tg.waitFor(() =>
      tg.state.botMessages(ALICE.id).find((m) => m.text.includes("Which color?")),
    );
    expect(card.reply_markup).toBeUndefined();
    expect(card.text).toContain(
      "Options — 1: red · blue; 2: S · L. Reply to this message with your answer to the first question not yet answered.",
    );
    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "blue", replyTo: card.message_id });
    const updated = await tg.waitFor(() => {
      const now = tg.state.message(ALICE.id, card.message_id);
      return now?.text.includes("Answer: blue") ? now : undefined;
    });
    // The same keyboard (or the rest of it) would be refused again: the update goes without, as the post did.
    expect(tg.callsOf("editMessageText").map((call) => call.params.reply_markup)).toEqual([undefined]);
    expect(updated.text).toContain("Options — 2: S · L.");
    expect(updated.text).not.toContain("1: red");
    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "L", replyTo: card.message_id });
    await tg.waitFor(() => tg.state.botMessages(ALICE.id).some((m) => m.text === "both answered"));
  });
});
