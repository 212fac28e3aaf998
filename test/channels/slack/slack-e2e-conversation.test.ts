/**
 * End-to-end: a real Bolt app in Socket Mode against the fake Slack, the real SessionManager,
 * and the real OpenAI-compatible provider against the fake OpenAI server.
 */
import { afterEach, describe, expect, it } from "vitest";
import { countFences } from "../../../src/channels/slack/slack-split.js";
import { echoHandler } from "../../fakes/fake-openai.js";
import {
  ANA,
  buttonId,
  DM,
  type E2E,
  GENERAL,
  MENTION,
  messageWithButton,
  shown,
  startE2E,
  thread,
  userTexts,
} from "./e2e-harness.js";
import { actionIds, blockTexts } from "./support.js";

let e2e: E2E;
afterEach(async () => e2e?.close());

describe("Slack end to end: conversations", () => {
  it("answers a DM in the message's thread", async () => {
    e2e = await startE2E(echoHandler);
    const { fake } = e2e;
    const { ts } = fake.userPosts({ user: ANA, channel: DM, text: "hello there" });
    const [reply] = await fake.waitFor(() => {
      const replies = thread(fake, DM, ts);
      return replies.length > 0 && !fake.state.botMessages(DM, ts)[0]!.streaming ? replies : undefined;
    }, "the DM reply");
    expect(reply).toBe('You said: "hello there"');
    expect(userTexts(e2e.openai, 0).at(-1)).toContain("hello there");
  });

  it("follows a channel mention with a thread reply that sees the first exchange", async () => {
    e2e = await startE2E(echoHandler);
    const { fake, openai } = e2e;
    const { ts } = fake.userPosts({ user: ANA, channel: GENERAL, text: `${MENTION} what is 2+2?` });
    await fake.waitFor(() => thread(fake, GENERAL, ts)[0]?.includes("You said"), "first reply");
    await e2e.current.manager.idle();
    fake.userPosts({ user: ANA, channel: GENERAL, text: "and 3+3?", threadTs: ts });
    await fake.waitFor(
      () => thread(fake, GENERAL, ts).length === 2 && openai.requests.length === 2,
      "second reply",
    );
    await e2e.current.manager.idle();
    const second = openai.requests[1].messages as { role: string; content: string }[];
    expect(second.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(second[1]!.content).toContain("what is 2+2?");
    expect(second[1]!.content).not.toContain("<@U0BOT>");
    expect(second[2]!.content).toContain('You said: "what is 2+2?"');
    expect(second[3]!.content).toContain("and 3+3?");
    expect(thread(fake, GENERAL, ts)[1]).toBe('You said: "and 3+3?"');
  });

  it("handles duplicate deliveries once: a redelivered event and the message/app_mention twin", async () => {
    e2e = await startE2E(echoHandler);
    const { fake, openai } = e2e;
    const { ts, deliveries } = fake.userPosts({ user: ANA, channel: GENERAL, text: `${MENTION} only once` });
    expect(deliveries).toHaveLength(2);
    const event = {
      type: "message",
      channel: DM,
      channel_type: "im",
      user: ANA,
      text: "ping",
      ts: fake.state.nextTs(),
      client_msg_id: "c-1",
    };
    await fake.sendEvent(event, { eventId: "EvDUP" }).acked;
    await fake.sendEvent(event, { eventId: "EvDUP", retryAttempt: 1 }).acked;
    await fake.waitFor(
      () => thread(fake, GENERAL, ts).length > 0 && thread(fake, DM, event.ts).length > 0,
      "both replies",
    );
    await e2e.current.manager.idle();
    expect(openai.requests).toHaveLength(2);
    expect(thread(fake, GENERAL, ts)).toHaveLength(1);
    expect(thread(fake, DM, event.ts)).toHaveLength(1);
  });

  it("splits a 12,000-character answer into ordered messages within Slack's limits", async () => {
    const paragraphs = Array.from(
      { length: 40 },
      (_, i) => `Paragraph ${i}: ${"some words here ".repeat(16)}`,
    );
    const code =
      "```js\n" +
      Array.from({ length: 60 }, (_, i) => `const line${i} = ${i} < 10 && true;`).join("\n") +
      "\n```";
    const answer = [...paragraphs.slice(0, 20), code, ...paragraphs.slice(20)].join("\n\n");
    expect(answer.length).toBeGreaterThan(12_000);
    const chunks = answer.match(/[\s\S]{1,400}/g) ?? [];
    e2e = await startE2E(() => ({ text: chunks }));
    const { fake } = e2e;
    const { ts } = fake.userPosts({ user: ANA, channel: DM, text: "write a lot" });
    await fake.waitFor(() => {
      const messages = fake.state.botMessages(DM, ts);
      return messages.length > 1 && messages.every((m) => !m.streaming && actionIds(m.blocks).length === 0);
    }, "the final pages");
    const messages = fake.state.botMessages(DM, ts);
    expect(messages.length).toBeGreaterThanOrEqual(2);
    for (const message of messages) {
      expect(message.blocks.length).toBeLessThanOrEqual(50);
      for (const text of blockTexts(message.blocks)) {
        expect(text.length).toBeLessThanOrEqual(3_000);
        expect(countFences(text) % 2).toBe(0);
      }
      expect(actionIds(message.blocks)).toEqual([]);
    }
    const all = messages.map(shown).join("\n");
    const words = (s: string) =>
      s.replace(/```/g, "").replace(/&lt;/g, "<").replace(/&amp;/g, "&").split(/\s+/).filter(Boolean);
    expect(words(all)).toEqual(words(answer.replace(/```js/g, "```")));
    expect(fake.state.calls.filter((c) => c.error && c.error !== "message_not_in_streaming_state")).toEqual(
      [],
    );
  });

  it("stops a streaming answer when Stop is pressed, aborting the model request", async () => {
    e2e = await startE2E(
      () => ({ text: Array.from({ length: 400 }, (_, i) => `word${i} `), chunkDelayMs: 20 }),
      {
        nativeStreaming: false,
      },
    );
    const { fake, openai } = e2e;
    const { ts } = fake.userPosts({ user: ANA, channel: DM, text: "talk for a long time" });
    const live = await fake.waitFor(
      () => messageWithButton(fake, DM, ts, "Stop"),
      "the live reply with Stop",
    );
    fake.pressButton({ user: ANA, channel: DM, messageTs: live.ts, actionId: buttonId(live, "Stop")! });
    await openai.waitForAbort(0);
    await e2e.current.manager.idle();
    await fake.waitFor(() => blockTexts(live.blocks).at(-1) === "■ Stopped.", "the stopped reply");
    expect(actionIds(live.blocks)).toEqual([]);
    const full = Array.from({ length: 400 }, (_, i) => `word${i} `).join("");
    const before = shown(live).replace("\n■ Stopped.", "");
    expect(before.length).toBeGreaterThan(0);
    expect(full.startsWith(before)).toBe(true);
    expect(openai.requests).toHaveLength(1);
  });
});
