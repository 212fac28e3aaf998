/** addressOf: a stored Telegram ThreadTarget read as the chat, topic and reply a send goes to. */
import { describe, expect, it } from "vitest";
import type { ThreadTarget } from "../../../src/core/thread-target.js";
import { addressOf } from "../../../src/channels/telegram/telegram-send.js";

const target = (fields: Partial<ThreadTarget>): ThreadTarget => ({
  platform: "telegram",
  workspace: "tg",
  channel: "42",
  ...fields,
});

describe("addressOf", () => {
  it("reads a private chat, a group topic and the message to reply to", () => {
    expect(addressOf(target({ extra: { chatType: "private", replyTo: 7 } }))).toEqual({
      chatId: 42,
      replyTo: 7,
      isPrivate: true,
    });
    expect(addressOf(target({ channel: "-1001", thread: "5", extra: { chatType: "supergroup" } }))).toEqual({
      chatId: -1001,
      threadId: 5,
      isPrivate: false,
    });
  });

  it("takes the General topic (1) as no topic, and a chat without a type by the sign of its id", () => {
    expect(addressOf(target({ channel: "-7", thread: "1" }))).toEqual({ chatId: -7, isPrivate: false });
    expect(addressOf(target({ channel: "9" }))).toEqual({ chatId: 9, isPrivate: true });
  });

  it.each([
    ["another platform", { platform: "slack" }],
    ["a chat id that is no number", { channel: "C0123" }],
    ["an empty chat id", { channel: "" }],
    ["a fractional chat id", { channel: "4.5" }],
    ["a chat id in exponent notation", { channel: "1e3" }],
    ["a topic id of 0", { thread: "0" }],
    ["a topic id that is no number", { thread: "general" }],
    ["a negative reply id", { extra: { replyTo: -3 } }],
    ["a reply id that is no number", { extra: { replyTo: "latest" } }],
    ["a chat type that is no string", { extra: { chatType: 1 } }],
  ] as const)("refuses %s with a clear error", (_, fields) => {
    expect(() => addressOf(target(fields as Partial<ThreadTarget>))).toThrow(/not a Telegram thread target/);
  });
});
