/**
 * A wake turn's provenance through the queue: the subscription whose content woke it is kept in
 * the queue entry and survives the session record's store round trip, so the woken turn's
 * catch_up can find that subscription by id; so does the mark of a wake-up whose input is the
 * agent's own note, which the turn's request then carries.
 */
import { describe, expect, it } from "vitest";
import { newSessionRecord, sessionRecordSchema } from "../../src/sessions/session-record.js";
import { queuedWake, wakeTurnSchema } from "../../src/sessions/wake-turns.js";
import { buildTurnRequest } from "../../src/sessions/request-builder.js";
import { requestFromJSON, requestToJSON } from "../../src/core/request.js";
import { startedByAgentNote } from "../../src/core/agent-note.js";

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

  it("keep the mark of the agent's own note through the round trip, into the stored request", () => {
    const turn = wakeTurnSchema.parse({
      sessionId: "s1",
      target: TARGET,
      prompt: "[Wake-up wak_0123456789ab: you asked to be woken at …]",
      requester: { id: "4242", name: "Ana" },
      scheduledRun: { taskId: "wak_0123456789ab", dueAt: "2026-01-01T00:01:00.000Z" },
      agentNote: true,
    });
    const base = newSessionRecord({
      id: "s1",
      target: TARGET,
      key: "k",
      mode: "reviewed",
      provider: "p",
      model: "m",
      now: new Date("2026-01-01T00:00:00Z"),
    });
    const person = {
      user: { id: "4242", name: "Ana" },
      text: "hi",
      files: [],
      sentAt: "2026-01-01T00:00:00Z",
    };
    const record = { ...base, queue: [person, queuedWake(turn, "2026-01-01T00:01:00Z")] };
    const stored = sessionRecordSchema.parse(JSON.parse(JSON.stringify(record)));
    expect(stored.queue.map((queued) => queued.agentNote)).toEqual([undefined, true]);
    const requests = stored.queue.map((queued) =>
      buildTurnRequest({
        record: stored,
        message: queued,
        history: [],
        settings: { workspace: { root: "/w", context: "" }, maxSteps: 3 },
        turnId: "t1",
      }),
    );
    const restored = requests.map((request) =>
      requestFromJSON(JSON.parse(JSON.stringify(requestToJSON(request)))),
    );
    expect(restored.map(startedByAgentNote)).toEqual([false, true]);
  });
});
