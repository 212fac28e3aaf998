/** Telegram intake screening: updates that pass, garbage refused with its kind, polling results. */
import type { Context } from "grammy";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { IntakeLog } from "../../../src/channels/intake-log.js";
import {
  intakeScreen,
  screenedMessage,
  screenUpdate,
} from "../../../src/channels/telegram/telegram-intake.js";
import {
  parseTelegramMessage,
  telegramMessageSchema,
} from "../../../src/channels/telegram/telegram-inbound.js";
import { telegramTemplates } from "../../support/intake-fuzz.js";

const t = telegramTemplates(6666, 1001);

describe("screenUpdate", () => {
  it("passes each kind the bot handles", () => {
    for (const body of [t.message, t.channelPost, t.callback, t.member, t.stopped])
      expect(screenUpdate({ update_id: 1, ...body })).toEqual({ pass: true });
  });

  it("refuses malformed updates with their kind, keeping a press's query id so it can be answered", () => {
    expect(screenUpdate(null)).toEqual({ pass: false, kind: "malformed_update" });
    expect(screenUpdate({ message: t.message.message })).toEqual({ pass: false, kind: "malformed_update" });
    expect(screenUpdate({ update_id: 1, message: { ...t.message.message, chat: null } })).toEqual({
      pass: false,
      kind: "malformed_message",
    });
    expect(screenUpdate({ update_id: 1, business_message: t.message.message })).toEqual({
      pass: false,
      kind: "unhandled_update",
    });
    // Edits are asked for (channel subscriptions revise their copy) and screened as messages are.
    expect(screenUpdate({ update_id: 1, edited_message: t.message.message })).toEqual({ pass: true });
    expect(screenUpdate({ update_id: 1, edited_channel_post: { ...t.message.message, chat: null } })).toEqual(
      {
        pass: false,
        kind: "malformed_edited_channel_post",
      },
    );
    expect(screenUpdate({ update_id: 1, ...t.message, ...t.callback })).toEqual({
      pass: false,
      kind: "malformed_update",
    });
    expect(
      screenUpdate({ update_id: 1, callback_query: { ...t.callback.callback_query, from: "mallory" } }),
    ).toEqual({ pass: false, kind: "malformed_callback_query", callbackQueryId: "q1" });
    expect(screenUpdate({ update_id: 1, callback_query: { from: 5 } })).toEqual({
      pass: false,
      kind: "malformed_callback_query",
    });
  });

  it("refuses keys the kind table only inherits (constructor, toString, __proto__) as unhandled", () => {
    for (const raw of [
      '{"update_id":1,"constructor":{}}',
      '{"update_id":2,"__proto__":{}}',
      '{"update_id":3,"toString":1}',
      '{"update_id":4,"hasOwnProperty":{"chat":{"id":1}}}',
    ])
      expect(screenUpdate(JSON.parse(raw))).toEqual({ pass: false, kind: "unhandled_update" });
    // An inherited name beside a real kind does not make the update ambiguous.
    expect(screenUpdate({ ...JSON.parse('{"update_id":5,"__proto__":{}}'), ...t.message })).toEqual({
      pass: true,
    });
  });
});

describe("intakeScreen", () => {
  it("keeps the message it read with its update, so the handlers read it once", async () => {
    const screen = intakeScreen(new IntakeLog(pino({ level: "silent" })));
    const update = { update_id: 1, message: { ...t.message.message, unknown_field: "dropped" } };
    let passed = false;
    await screen({ update } as unknown as Context, async () => {
      passed = true;
    });
    expect(passed).toBe(true);
    const read = screenedMessage(update);
    expect(read?.message_id).toBe(t.message.message.message_id);
    expect(read).not.toHaveProperty("unknown_field");
    const press = { update_id: 2, ...t.callback };
    await screen({ update: press } as unknown as Context, async () => undefined);
    expect(screenedMessage(press)).toBeUndefined();
  });
});

describe("parseTelegramMessage", () => {
  it("reads every message as telegramMessageSchema does, a text message through its narrowed schema too", () => {
    const text = {
      message_id: 7,
      date: 1,
      chat: { id: 5, type: "private", first_name: "U" },
      from: { id: 5, first_name: "U" },
      text: "hi",
    };
    const entities = [{ type: "bot_command", offset: 0, length: 4 }];
    const inherited = Object.assign(Object.create({ caption: 5 }), text);
    /** `text` with an own field the schema reads that Object.keys does not list (not enumerable). */
    const hidden = (key: string, value: unknown) =>
      Object.defineProperty({ ...text }, key, { value, enumerable: false });
    for (const message of [
      text,
      { ...text, entities },
      { ...text, text: undefined },
      { ...text, message_id: 0 },
      { ...text, message_id: 2 ** 53 },
      { ...text, date: 1.5 },
      { ...text, chat: { id: 5, type: "secret" } },
      { ...text, chat: undefined },
      { ...text, from: { id: 5 } },
      { ...text, text: 5 },
      { ...text, entities: [{ type: "mention", offset: -1, length: 2 }] },
      { message_id: 7, date: 1, text: "no chat" },
      { ...text, caption: "a caption" },
      { ...text, caption: 5 },
      { ...text, photo: [{ file_id: "", file_unique_id: "u", width: 1, height: 1 }] },
      { ...text, forward_origin: { type: "hidden_user", sender_user_name: "M" } },
      { ...text, forward_origin: "mallory" },
      { ...text, edit_date: 2 },
      inherited,
      hidden("caption", 5),
      hidden("forward_origin", { type: "user", sender_user: { id: 9, first_name: "M" } }),
      { ...text, [Symbol("extra")]: 1 },
      Object.assign(Object.create(null), text),
      [text],
      null,
      "hi",
    ]) {
      const expected = telegramMessageSchema.safeParse(message);
      const read = parseTelegramMessage(message);
      expect(read.success).toBe(expected.success);
      expect(read.data).toEqual(expected.data);
      expect(read.error?.issues).toEqual(expected.error?.issues);
    }
  });
});
