/** Telegram intake screening: updates that pass, garbage refused with its kind, polling results. */
import { describe, expect, it } from "vitest";
import { screenUpdate } from "../../../src/channels/telegram/telegram-intake.js";
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
    expect(screenUpdate({ update_id: 1, edited_message: t.message.message })).toEqual({
      pass: false,
      kind: "unhandled_update",
    });
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
});
