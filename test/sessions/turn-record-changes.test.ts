/** What a turn writes into its session record when it starts and when it ends. */
import { describe, expect, it } from "vitest";
import { buildTurnRequest } from "../../src/sessions/request-builder.js";
import type { QueuedMessage } from "../../src/sessions/session-record.js";
import { withTurnFinished, withTurnStarted } from "../../src/sessions/turn-record-changes.js";
import { sessionRecord, thread } from "./helpers/harness.js";

const message: QueuedMessage = {
  user: { id: "U1", name: "Ada" },
  text: "  please summarise the report  ",
  files: [],
  sentAt: "2026-12-02T10:00:00.000Z",
  dedupeKeys: ["Ev1"],
};

function started(how: "run" | "retry") {
  const idle = sessionRecord("s1", { key: "k", target: thread(), mode: "auto" });
  const record = { ...idle, queue: [message] };
  const request = buildTurnRequest({
    record,
    message,
    history: [],
    settings: { workspace: { root: "/w", context: "" }, maxSteps: 3 },
    turnId: "t1",
  });
  return withTurnStarted(record, {
    message,
    how,
    request,
    startedAt: "2026-12-02T10:00:01.000Z",
    historyLength: 4,
  });
}

describe("turn record changes", () => {
  it("a run takes the message off the queue into the marker, counts the turn and names the session", () => {
    const record = started("run");
    expect(record.queue).toEqual([]);
    expect(record.turns).toBe(1);
    expect(record.title).toBe("please summarise the report");
    // Who started the session is set when it is created, never by a turn.
    expect(record.startedBy).toBeUndefined();
    expect(record.pendingTurn).toMatchObject({
      turnId: "t1",
      startedAt: "2026-12-02T10:00:01.000Z",
      startedFrom: { how: "run", historyLength: 4 },
      dedupeKeys: ["Ev1"],
    });
    expect(record.pendingTurn?.request).toMatchObject({ turnId: "t1", messages: [] });
  });

  it("a retry neither counts a turn nor names who started the session", () => {
    const record = started("retry");
    expect(record.turns).toBe(0);
    expect(record.startedBy).toBeUndefined();
  });

  it("the end clears the marker and adds the usage; the downloaded files stay out of the record", () => {
    const record = withTurnFinished(started("run"), { inputTokens: 10, outputTokens: 5, totalTokens: 15 });
    expect(record.pendingTurn).toBeUndefined();
    expect(record.usage).toEqual({ inputTokens: 10, outputTokens: 5, totalTokens: 15 });
    expect(record).not.toHaveProperty("downloadedFiles");
  });
});
