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

/** A wake turn of Ana's session s1, with `fields` (what woke it). */
function wakeOf(fields: Record<string, unknown>) {
  return wakeTurnSchema.parse({
    sessionId: "s1",
    target: TARGET,
    requester: { id: "4242", name: "Ana" },
    ...fields,
  });
}

/** Session s1's new record in `mode`, its queue holding `queue`, read back as the store returns it. */
function storedWith(mode: "interactive" | "reviewed", queue: readonly unknown[]) {
  const base = newSessionRecord({
    id: "s1",
    target: TARGET,
    key: "k",
    mode,
    provider: "p",
    model: "m",
    now: new Date("2026-01-01T00:00:00Z"),
  });
  return sessionRecordSchema.parse(JSON.parse(JSON.stringify({ ...base, queue })));
}

describe("queued wake turns", () => {
  it("keep the waking subscription's id through the session record round trip", () => {
    const turn = wakeOf({
      prompt: "Messages from Team (channel content)",
      channelContent: { channel: "Team", quote: "hello", subscriptionId: "sub_00000000000a" },
    });
    const stored = storedWith("interactive", [queuedWake(turn, "2026-01-01T00:00:01Z")]);
    expect(stored.queue[0]?.channelContent).toEqual({
      channel: "Team",
      quote: "hello",
      subscriptionId: "sub_00000000000a",
    });
  });

  it("keep the mark of the agent's own note through the round trip, into the stored request", () => {
    const turn = wakeOf({
      prompt: "[Wake-up wak_0123456789ab: you asked to be woken at …]",
      scheduledRun: { taskId: "wak_0123456789ab", dueAt: "2026-01-01T00:01:00.000Z" },
      agentNote: true,
    });
    const person = {
      user: { id: "4242", name: "Ana" },
      text: "hi",
      files: [],
      sentAt: "2026-01-01T00:00:00Z",
    };
    const stored = storedWith("reviewed", [person, queuedWake(turn, "2026-01-01T00:01:00Z")]);
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
