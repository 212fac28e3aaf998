import { describe, expect, it } from "vitest";
import {
  SendScheduler,
  SendSkipped,
  sendCostOf,
  TELEGRAM_SEND_LIMITS,
  throttleTransformer,
} from "../../../src/channels/telegram/telegram-throttle.js";

function scheduler() {
  let clock = 0;
  const instance = new SendScheduler(TELEGRAM_SEND_LIMITS, () => clock);
  return {
    instance,
    advance: (ms: number) => {
      clock += ms;
    },
    /** Book a message like the transformer does; the absolute time it may go out. */
    sendAt: (chatId: number) => {
      const chatDue = clock + instance.reserveChat(chatId);
      const saved = clock;
      clock = chatDue;
      const due = clock + instance.reserveGlobal();
      clock = saved;
      return due;
    },
  };
}

describe("sendCostOf", () => {
  it("counts sends and edits per chat, drafts and chat actions globally, callbacks not at all", () => {
    expect(sendCostOf("sendMessage", { chat_id: 5 })).toEqual({ kind: "message", chatId: 5 });
    expect(sendCostOf("editMessageText", { chat_id: -100 })).toEqual({ kind: "message", chatId: -100 });
    expect(sendCostOf("sendDocument", { chat_id: "7" })).toEqual({ kind: "message", chatId: 7 });
    expect(sendCostOf("sendMessageDraft", { chat_id: 5 })).toEqual({ kind: "global" });
    expect(sendCostOf("sendChatAction", { chat_id: 5 })).toEqual({ kind: "global" });
    expect(sendCostOf("answerCallbackQuery", { callback_query_id: "1" })).toBeUndefined();
    expect(sendCostOf("getUpdates", {})).toBeUndefined();
  });
});

describe("SendScheduler", () => {
  it("sends the first messages of a chat at once, then about one per second", () => {
    const { sendAt } = scheduler();
    const times = Array.from({ length: 6 }, () => sendAt(42));
    expect(times).toEqual([0, 0, 0, 1000, 2000, 3000]);
  });

  it("refills a private chat's burst after a pause", () => {
    const { sendAt, advance } = scheduler();
    for (let i = 0; i < 3; i++) sendAt(42);
    advance(10_000);
    expect([sendAt(42), sendAt(42), sendAt(42)]).toEqual([10_000, 10_000, 10_000]);
  });

  it("holds a group to 20 messages in any minute", () => {
    const { sendAt, advance } = scheduler();
    const times: number[] = [];
    for (let i = 0; i < 60; i++) {
      times.push(sendAt(-100));
      advance(500);
    }
    for (const start of times) {
      expect(times.filter((time) => time >= start && time < start + 60_000).length).toBeLessThanOrEqual(20);
    }
    expect(times.slice(0, 3)).toEqual([0, 500, 1000]);
  });

  it("keeps all chats together under 30 per second", () => {
    const { instance } = scheduler();
    const waits = Array.from({ length: 90 }, () => instance.reserveGlobal());
    expect(waits.slice(0, 30).every((wait) => wait === 0)).toBe(true);
    expect(Math.max(...waits)).toBeGreaterThanOrEqual(1900);
    expect(Math.max(...waits)).toBeLessThanOrEqual(2000.001);
  });

  it("books a global slot for a courtesy call only when one is free at once with two thirds of the burst spare", () => {
    const { instance, advance } = scheduler();
    for (let i = 0; i < 9; i++) instance.reserveGlobal();
    expect(instance.reserveSpareGlobal()).toBe(true);
    expect(instance.reserveSpareGlobal()).toBe(false);
    expect(instance.reserveGlobal()).toBe(0);
    advance(1000);
    expect(instance.reserveSpareGlobal()).toBe(true);
  });

  it("does not let one busy chat delay another chat's first message", () => {
    const { instance } = scheduler();
    // Chat 1 books ten messages now; the three due at once also take their global slots now.
    const busy = Array.from({ length: 10 }, () => instance.reserveChat(1));
    for (const wait of busy) if (wait === 0) instance.reserveGlobal();
    expect(busy[9]).toBe(7000);
    expect(instance.reserveChat(2)).toBe(0);
    expect(instance.reserveGlobal()).toBe(0);
  });
});

describe("throttleTransformer", () => {
  it("delays only throttled calls and passes everything through", async () => {
    const order: string[] = [];
    const transformer = throttleTransformer(
      new SendScheduler({
        perChat: { ratePerSecond: 50, burst: 1 },
        perGroup: { ratePerSecond: 50, burst: 1 },
        global: { ratePerSecond: 1000, burst: 100 },
      }),
    );
    const prev = (async (method: string) => {
      order.push(method);
      return { ok: true, result: true };
    }) as never;
    const started = performance.now();
    await transformer(prev, "sendMessage", { chat_id: 1, text: "a" } as never);
    await transformer(prev, "sendMessage", { chat_id: 1, text: "b" } as never);
    const elapsed = performance.now() - started;
    await transformer(prev, "answerCallbackQuery", { callback_query_id: "q" } as never);
    expect(order).toEqual(["sendMessage", "sendMessage", "answerCallbackQuery"]);
    expect(elapsed).toBeGreaterThanOrEqual(15);
  });

  it("fails a call aborted while it waits for its slot, and one aborted before, without sending them", async () => {
    const transformer = throttleTransformer(
      new SendScheduler({
        perChat: { ratePerSecond: 1, burst: 1 },
        perGroup: { ratePerSecond: 1, burst: 1 },
        global: { ratePerSecond: 1000, burst: 100 },
      }),
    );
    const sent: string[] = [];
    const prev = (async (_method: string, payload: { text: string }) => {
      sent.push(payload.text);
      return { ok: true, result: true };
    }) as never;
    await transformer(prev, "sendMessage", { chat_id: 1, text: "a" } as never);
    const controller = new AbortController();
    const waiting = transformer(
      prev,
      "sendMessage",
      { chat_id: 1, text: "b" } as never,
      controller.signal as never,
    );
    controller.abort();
    await expect(waiting).rejects.toThrow("Bot API call aborted while throttled");
    const late = transformer(
      prev,
      "sendMessage",
      { chat_id: 1, text: "c" } as never,
      controller.signal as never,
    );
    await expect(late).rejects.toThrow("Bot API call aborted while throttled");
    expect(sent).toEqual(["a"]);
  });

  it("drops a chat action instead of queueing it when the global limit has no spare room now", async () => {
    const scheduler = new SendScheduler({
      perChat: { ratePerSecond: 1, burst: 1 },
      perGroup: { ratePerSecond: 1, burst: 1 },
      global: { ratePerSecond: 1, burst: 1 },
    });
    const transformer = throttleTransformer(scheduler);
    const order: string[] = [];
    const prev = (async (method: string) => {
      order.push(method);
      return { ok: true, result: true };
    }) as never;
    await transformer(prev, "sendChatAction", { chat_id: 1, action: "typing" } as never);
    await expect(
      transformer(prev, "sendChatAction", { chat_id: 2, action: "typing" } as never),
    ).rejects.toBeInstanceOf(SendSkipped);
    expect(order).toEqual(["sendChatAction"]);
  });

  it("queues a turn's first draft like a message, and drops its updates when the limit has no spare room", async () => {
    const scheduler = new SendScheduler({
      perChat: { ratePerSecond: 1, burst: 1 },
      perGroup: { ratePerSecond: 1, burst: 1 },
      global: { ratePerSecond: 20, burst: 1 },
    });
    const transformer = throttleTransformer(scheduler);
    const order: string[] = [];
    const prev = (async (method: string, payload: { chat_id: number }) => {
      order.push(`${method}:${payload.chat_id}`);
      return { ok: true, result: true };
    }) as never;
    await transformer(prev, "sendMessageDraft", { chat_id: 1, draft_id: 7, text: "a" } as never);
    await transformer(prev, "sendMessageDraft", { chat_id: 2, draft_id: 7, text: "a" } as never);
    await expect(
      transformer(prev, "sendMessageDraft", { chat_id: 1, draft_id: 7, text: "ab" } as never),
    ).rejects.toBeInstanceOf(SendSkipped);
    await new Promise((resolve) => setTimeout(resolve, 120));
    await transformer(prev, "sendMessageDraft", { chat_id: 1, draft_id: 7, text: "ab" } as never);
    expect(order).toEqual(["sendMessageDraft:1", "sendMessageDraft:2", "sendMessageDraft:1"]);
  });
});
