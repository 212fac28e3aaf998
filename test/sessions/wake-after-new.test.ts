/**
 * Standing items belong to the thread, not to the session that set them up: after anyone's "new"
 * a scheduled run or a subscription's wake-up for the replaced session runs in the thread's
 * current session (fresh history), neither paused nor closed as "gone". A session of another
 * thread, or an unknown one, is still gone.
 */
import { describe, expect, it } from "vitest";
import { sessionKeyOf } from "../../src/core/thread-target.js";
import { SessionRecords } from "../../src/sessions/session-records.js";
import type { WakeTurn } from "../../src/sessions/wake-turns.js";
import { textStep } from "../support/scripted-provider.js";
import { ANA, BEN, type Harness, makeHarness, message, thread } from "./helpers/harness.js";

async function currentSessionId(h: Harness, target = thread()): Promise<string> {
  const records = new SessionRecords(h.store.space("sessions"));
  return (await records.currentId(sessionKeyOf(target)))!;
}

/** Ana's scheduled run (or, with `channel`, her subscription's wake-up) for session `sessionId`. */
function wakeOf(sessionId: string, prompt: string, channel = false, target = thread()): WakeTurn {
  return {
    sessionId,
    target,
    prompt,
    requester: ANA,
    ...(channel
      ? { channelContent: { channel: "#deploys", quote: "deploy failed" } }
      : { scheduledRun: { taskId: "tsk_0123456789ab", dueAt: "2026-12-01T08:00:00.000Z" } }),
  };
}

describe("wake turns after 'new'", () => {
  it("a scheduled run and a subscription's wake-up of the replaced session run in the thread's new session", async () => {
    const h = await makeHarness({
      steps: [textStep("hi ana"), textStep("summary"), textStep("deploys")],
    });
    await h.manager.receive(message("hi", { user: ANA }));
    await h.manager.idle();
    const oldId = await currentSessionId(h);
    expect(await h.manager.command(thread(), BEN, "new", [])).toMatch(/^Started a new session/);
    const newId = await currentSessionId(h);
    expect(newId).not.toBe(oldId);

    expect(await h.manager.wake(wakeOf(oldId, "Ana's daily summary"))).toEqual({ status: "started" });
    await h.manager.idle();
    expect(h.provider.lastRequest.messages.map((m) => m.content)).toEqual([
      "You are a test agent.",
      "Ana's daily summary",
    ]);
    expect(await h.manager.wake(wakeOf(oldId, "Messages from #deploys", true))).toEqual({
      status: "started",
    });
    await h.manager.idle();
    expect(h.provider.lastRequest.messages.map((m) => m.content).slice(1)).toEqual([
      "Ana's daily summary",
      "summary",
      "Messages from #deploys",
    ]);
    const turns = h.outputs.for(thread()).closedTurns;
    expect(turns.map((t) => t.sessionId)).toEqual([oldId, newId, newId]);
    expect(await currentSessionId(h)).toBe(newId);
  });

  it("a session of another thread, or an unknown one, is gone", async () => {
    const h = await makeHarness({ steps: [textStep("hi")] });
    const other = thread("1700000000.000200");
    await h.manager.receive(message("hi", { target: other }));
    await h.manager.idle();
    const otherId = await currentSessionId(h, other);
    expect(await h.manager.wake(wakeOf(otherId, "elsewhere"))).toEqual({
      status: "gone",
      reason: "the session belongs to another conversation",
    });
    expect(await h.manager.wake(wakeOf("no-such-session", "nobody"))).toEqual({
      status: "gone",
      reason: "the conversation no longer exists",
    });
  });
});
