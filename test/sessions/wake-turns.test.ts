/**
 * A wake turn's provenance through the queue: the subscription whose content woke it is kept in
 * the queue entry and survives the session record's store round trip, so the woken turn's
 * catch_up can find that subscription by id.
 */
import { describe, expect, it } from "vitest";
import { newSessionRecord, sessionRecordSchema } from "../../src/sessions/session-record.js";
import { queuedWake, wakeTurnSchema } from "../../src/sessions/wake-turns.js";

const TARGET = { platform: "telegram", workspace: "tg", channel: "4242" };

describe("queued wake turns", () => {
  it("keep the waking subscription's id through the session record round trip", () => {
    const turn = wakeTurnSchema.parse({
      sessionId: "s1",
      target: TARGET,
      prompt: "Messages from Team (channel content)",
      requester: { id: "4242", name: "Ana" },
      channelContent: { channel: "Team", quote: "hello", subscriptionId: "sub_00000000000a" },
    });
    const record = {
      ...newSessionRecord({
        id: "s1",
        target: TARGET,
        key: "k",
        mode: "interactive",
        provider: "p",
        model: "m",
        now: new Date("2026-01-01T00:00:00Z"),
      }),
      queue: [queuedWake(turn, "2026-01-01T00:00:01Z")],
    };
    const stored = sessionRecordSchema.parse(JSON.parse(JSON.stringify(record)));
    expect(stored.queue[0]?.channelContent).toEqual({
      channel: "Team",
      quote: "hello",
      subscriptionId: "sub_00000000000a",
    });
  });
});
