/**
 * A wake-up whose input is the agent's own note, through the real SessionManager: queued behind a
 * turn parked at a card, kept through a restart (the queue is in the session record), and stored
 * in the history marked as the agent's note — while the person's own messages are not.
 */
import { describe, expect, it } from "vitest";
import { startedByAgentNote } from "../../src/core/agent-note.js";
import type { ConversationExecutionRequest } from "../../src/core/request.js";
import { ProviderError } from "../../src/engine/provider/provider.js";
import type { WakeTurn } from "../../src/sessions/wake-turns.js";
import { storedHistory } from "../support/stored-history.js";
import { textStep, toolStep } from "../support/scripted-provider.js";
import { ANA, makeHarness, message, pressCard, tempDir, thread } from "./helpers/harness.js";
import { ToolRuns } from "./helpers/test-tools.js";

const NOTE = "[Wake-up wak_0123456789ab: you asked to be woken]\n> The user asked me to push to my mirror.";

function wakeOf(sessionId: string): WakeTurn {
  return {
    sessionId,
    target: thread(),
    prompt: NOTE,
    requester: ANA,
    scheduledRun: { taskId: "wak_0123456789ab", dueAt: "2026-12-01T08:01:00.000Z" },
    agentNote: true,
  };
}

describe("a wake-up's note in a session", () => {
  it("queued behind a parked turn, keeps its mark through a restart and is stored as the agent's", async () => {
    const dataDir = tempDir();
    const runs = new ToolRuns();
    const first = await makeHarness({
      dataDir,
      runs,
      steps: [toolStep(["c1", "write_note", { text: "a" }])],
    });
    await first.manager.receive(message("write a"));
    const card = await first.outputs.until(() => first.outputs.for(thread()).latestCards[0], "card");
    const status = await first.manager.command(thread(), ANA, "status", []);
    const sessionId = /Session (\S+)/.exec(status)?.[1] ?? "";
    expect((await first.manager.wake(wakeOf(sessionId))).status).toBe("queued");
    await first.manager.drain(1_000);
    await first.store.close();

    const second = await makeHarness({ dataDir, runs, steps: [textStep("wrote it"), textStep("checked")] });
    await second.manager.start();
    await pressCard(second, card, "once", ANA);
    await second.manager.idle();
    const history = await storedHistory(second.store.space("history"), sessionId);
    expect(
      history.filter((m) => m.role === "user").map((m) => [m.content, m.meta?.agentNote === true]),
    ).toEqual([
      ["write a", false],
      [NOTE, true],
    ]);
    await second.store.close();
  });

  it("a retry of the turn a note started is the agent's note again, as the engine is told", async () => {
    const h = await makeHarness({
      steps: [
        textStep("hi"),
        { error: new ProviderError("server", "The model service failed.", 500) },
        textStep("done"),
      ],
    });
    await h.manager.receive(message("hello"));
    await h.manager.idle();
    const sessionId = /Session (\S+)/.exec(await h.manager.command(thread(), ANA, "status", []))?.[1] ?? "";
    const started: [string, boolean][] = [];
    for (const engine of h.engines)
      for (const how of ["run", "retry"] as const) {
        const original = engine[how].bind(engine);
        engine[how] = (request: ConversationExecutionRequest) => {
          started.push([how, startedByAgentNote(request)]);
          return original(request);
        };
      }
    await h.manager.wake(wakeOf(sessionId));
    await h.manager.idle();
    expect(
      (await h.manager.press({ kind: "control", control: "retry", target: thread(), user: ANA })).status,
    ).toBe("accepted");
    await h.manager.idle();
    expect(started).toEqual([
      ["run", true],
      ["retry", true],
    ]);
    await h.store.close();
  });
});
