/**
 * A turn's request snapshot and the session record it is built from: the record holds its target
 * deep-frozen — copied when the session is made, frozen whole when read back — so every turn's
 * snapshot shares it instead of copying it, and nothing the channel changes later reaches either.
 */
import { describe, expect, it } from "vitest";
import { isDeeplyFrozen } from "../../src/core/deep-freeze.js";
import type { ThreadTarget } from "../../src/core/thread-target.js";
import { buildTurnRequest } from "../../src/sessions/request-builder.js";
import type { QueuedMessage, SessionRecord } from "../../src/sessions/session-record.js";
import { SessionRecords } from "../../src/sessions/session-records.js";
import { openStore, sessionRecord } from "./helpers/harness.js";

const message: QueuedMessage = {
  user: { id: "U1", name: "Ada" },
  text: "hello",
  files: [],
  sentAt: "2026-12-03T10:00:00.000Z",
};

function requestFor(record: SessionRecord) {
  return buildTurnRequest({
    record,
    message,
    history: [],
    settings: { workspace: { root: "/w", context: "" }, maxSteps: 3 },
    turnId: "t1",
  });
}

describe("a turn's request and its session's target", () => {
  it("a new session copies the channel's target deep-frozen, and its requests share that copy", () => {
    const target: { -readonly [K in keyof ThreadTarget]: ThreadTarget[K] } = {
      platform: "telegram",
      workspace: "tg",
      channel: "42",
      extra: { chatType: "private", replyTo: 7 },
    };
    const record = sessionRecord("s1", { target });
    target.extra = { chatType: "group" };
    target.channel = "43";
    expect(record.target).toEqual({
      platform: "telegram",
      workspace: "tg",
      channel: "42",
      extra: { chatType: "private", replyTo: 7 },
    });
    expect(isDeeplyFrozen(record.target)).toBe(true);
    expect(requestFor(record).metadata.target).toBe(record.target);
  });

  it("a record read back from the store is deep-frozen, and its requests share its target", async () => {
    const store = await openStore();
    try {
      const records = new SessionRecords(store.space("sessions"));
      const written = sessionRecord("s2", {
        target: { platform: "telegram", workspace: "tg", channel: "42", extra: { replyTo: 7 } },
      });
      await records.put({ ...written, queue: [message] });
      const read = await records.get("s2");
      expect(read?.target).toEqual(written.target);
      expect(isDeeplyFrozen(read)).toBe(true);
      expect(() => (read!.queue as QueuedMessage[]).push(message)).toThrow(TypeError);
      expect(requestFor(read!).metadata.target).toBe(read!.target);
    } finally {
      await store.close();
    }
  });
});
