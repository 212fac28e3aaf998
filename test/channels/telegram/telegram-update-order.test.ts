/**
 * The order updates are handled in: a chat's (and topic's) messages one after another, whatever
 * the one before did; other chats, other topics and updates that are not messages at once.
 */
import type { Context } from "grammy";
import { describe, expect, it } from "vitest";
import { inUpdateOrder } from "../../../src/channels/telegram/telegram-update-order.js";

function messageIn(chatId: number, topic?: number): Context {
  const message = {
    chat: { id: chatId },
    ...(topic === undefined ? {} : { is_topic_message: true, message_thread_id: topic }),
  };
  return { message } as unknown as Context;
}

const PRESS = { message: undefined } as unknown as Context;

/** A handling that runs until `finish` (or `fail`) is called, noting when it started. */
function gated(log: string[], name: string) {
  let finish!: () => void;
  let fail!: (error: Error) => void;
  const settled = new Promise<void>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  const next = () => {
    log.push(name);
    return settled;
  };
  return { next, finish: () => finish(), fail: (error: Error) => fail(error) };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("inUpdateOrder", () => {
  it("handles a chat's messages one after another, a failure included, and other updates at once", async () => {
    const order = inUpdateOrder();
    const log: string[] = [];
    const first = gated(log, "first");
    const second = gated(log, "second");
    const third = gated(log, "third");
    const handledFirst = order(messageIn(1), first.next);
    const handledSecond = order(messageIn(1), second.next);
    const handledThird = order(messageIn(1), third.next);
    const elsewhere = gated(log, "other chat");
    void order(messageIn(2), elsewhere.next);
    const topic = gated(log, "topic");
    void order(messageIn(1, 7), topic.next);
    const press = gated(log, "press");
    void order(PRESS, press.next);
    await tick();
    expect(log).toEqual(["first", "other chat", "topic", "press"]);
    first.fail(new Error("boom"));
    await expect(handledFirst).rejects.toThrow("boom");
    await tick();
    expect(log.slice(4)).toEqual(["second"]);
    second.finish();
    await handledSecond;
    await tick();
    expect(log.slice(5)).toEqual(["third"]);
    third.finish();
    await expect(handledThird).resolves.toBeUndefined();
  });

  it("runs a chat's next message at once when the one before is done", async () => {
    const order = inUpdateOrder();
    const log: string[] = [];
    const first = gated(log, "first");
    const handled = order(messageIn(1), first.next);
    first.finish();
    await handled;
    await tick();
    const second = gated(log, "second");
    void order(messageIn(1), second.next);
    expect(log).toEqual(["first", "second"]);
  });

  it("handles an edit after the message before it in its chat (the message it edits, when both came together)", async () => {
    const order = inUpdateOrder();
    const log: string[] = [];
    const posted = gated(log, "posted");
    const edited = gated(log, "edited");
    void order(messageIn(1), posted.next);
    const edit = { editedMessage: { chat: { id: 1 } } } as unknown as Context;
    const handledEdit = order(edit, edited.next);
    await tick();
    expect(log).toEqual(["posted"]);
    posted.finish();
    await tick();
    expect(log).toEqual(["posted", "edited"]);
    edited.finish();
    await handledEdit;
  });
});
