/** Which buffered message wakes a subscription: loop guards first, then scope and trigger. */
import { describe, expect, it } from "vitest";
import type { BufferEntry } from "../../src/subscriptions/buffer-entry.js";
import type { Subscription } from "../../src/subscriptions/subscription.js";
import { wakesSubscription } from "../../src/subscriptions/wake-rule.js";

const BOT = { userId: "UBOT", names: ["coworker"] };

function subscription(overrides: Partial<Subscription> = {}): Subscription {
  return {
    id: "sub_1",
    sessionId: "s1",
    subscriberTarget: { platform: "slack", workspace: "T1", channel: "CHOME", thread: "100.1" },
    channelRef: { platform: "slack", workspace: "T1", channel: "CDEPLOY" },
    trigger: { type: "all" },
    createdAt: "2026-12-02T10:00:00.000Z",
    createdBy: { id: "U1", name: "Ada" },
    ...overrides,
  };
}

function entry(overrides: Partial<BufferEntry> = {}): BufferEntry {
  return {
    id: "200.1",
    seq: 1,
    author: { id: "U2", name: "Bob", isBot: false },
    at: "2026-12-02T10:01:00.000Z",
    text: "deploy finished",
    ...overrides,
  };
}

describe("wakesSubscription", () => {
  it("wakes on a message in the watched channel that the trigger matches", () => {
    expect(wakesSubscription(subscription(), entry(), BOT)).toBe(true);
    const keywords = subscription({ trigger: { type: "keywords", keywords: ["rollback"] } });
    expect(wakesSubscription(keywords, entry(), BOT)).toBe(false);
    expect(wakesSubscription(keywords, entry({ text: "starting a rollback" }), BOT)).toBe(true);
  });

  it("never wakes on the bot's own messages", () => {
    expect(
      wakesSubscription(
        subscription(),
        entry({ author: { id: "UBOT", name: "coworker", isBot: true } }),
        BOT,
      ),
    ).toBe(false);
  });

  it("never wakes the subscribing thread on what is said in that thread itself", () => {
    const inOwnChannel = subscription({
      channelRef: { platform: "slack", workspace: "T1", channel: "CHOME" },
    });
    expect(wakesSubscription(inOwnChannel, entry({ thread: "100.1" }), BOT)).toBe(false);
    expect(wakesSubscription(inOwnChannel, entry({ id: "100.1" }), BOT)).toBe(false);
    expect(wakesSubscription(inOwnChannel, entry({ thread: "300.1" }), BOT)).toBe(true);
  });

  it("keeps to the watched topic when the subscription names one", () => {
    const topic = subscription({
      channelRef: { platform: "slack", workspace: "T1", channel: "CDEPLOY", thread: "7" },
    });
    expect(wakesSubscription(topic, entry({ thread: "7" }), BOT)).toBe(true);
    expect(wakesSubscription(topic, entry({ thread: "8" }), BOT)).toBe(false);
  });
});
