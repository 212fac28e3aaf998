/**
 * Durable resume across restarts on SQLite: a turn parked at a card, a queued follow-up, a stored
 * question and a stop all carry over to a new process on the same data folder, and a SIGKILLed
 * child's calls run at most once (a call running at the kill is answered "interrupted").
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { TOOL_RESULT } from "../../src/engine/tool-results.js";
import { storedHistory } from "../support/stored-history.js";
import { RecordingOutput } from "../support/recording-output.js";
import { textStep, toolStep } from "../support/scripted-provider.js";
import { ANA, makeHarness, message, tempDir, thread, pressCard } from "./helpers/harness.js";
import { parkAtWriteCard } from "./helpers/parked-card.js";
import { type ToolRun, ToolRuns } from "./helpers/test-tools.js";
import { outcomeLine } from "../support/card-outcome.js";
import { cardPress } from "../support/card-press.js";

const ROOT = join(import.meta.dirname, "..", "..");

/** Run the child scenario until it prints its marker line, then SIGKILL it; resolves with the line. */
function runChildUntilMarker(dataDir: string, scenario: string, runsFile: string): Promise<string> {
  return new Promise((resolve, reject) => {
    // node itself (tsx as a loader, not the npx/tsx wrappers) so the SIGKILL hits the process that
    // holds the session, and no grandchild survives the test.
    const script = ["--import", "tsx", "test/support/session-child.ts", dataDir, scenario, runsFile];
    const child = spawn(process.execPath, script, {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let marker: string | undefined;
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      const line = stdout.split("\n").find((l) => /^(CARD|STARTED) /.test(l));
      if (line && !marker) {
        marker = line;
        child.kill("SIGKILL");
      }
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("exit", (code, signal) => {
      if (marker && signal === "SIGKILL") resolve(marker);
      else reject(new Error(`child ended (${code ?? signal}) without its marker:\n${stdout}\n${stderr}`));
    });
  });
}

function runsIn(file: string): ToolRun[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as ToolRun);
}

describe("durable resume across restarts (SQLite)", () => {
  it("resumes a turn suspended at an approval after every in-memory object is rebuilt", async () => {
    const dataDir = tempDir();
    const runs = new ToolRuns();
    const card = await parkAtWriteCard(dataDir, runs);

    const second = await makeHarness({ dataDir, runs, steps: [textStep("done after restart")] });
    await second.manager.start();
    const pressed = await pressCard(second, card, "once", ANA);
    expect(pressed.status).toBe("accepted");
    await second.manager.idle();
    expect(runs.count("c1")).toBe(1);
    const out2 = second.outputs.for(thread());
    expect(outcomeLine(out2.card(card.pendingId))).toBe("Approved by Ana (id U_ANA)");
    expect(RecordingOutput.textOf(out2.closedTurns.at(-1)!)).toBe("done after restart");
    second.provider.assertAllConsumed();
    // A second press after the restart is idempotent.
    const again = await pressCard(second, card, "deny", ANA);
    expect(again.status).toBe("already_decided");
    expect(runs.count("c1")).toBe(1);
    await second.store.close();
  });

  it("a press after the card's expiry, before its timer ran, continues the parked turn (the call denied)", async () => {
    const dataDir = tempDir();
    const runs = new ToolRuns();
    const card = await parkAtWriteCard(dataDir, runs);

    // Restarted before the expiry (its timer armed); the press comes after it, before the timer ran.
    let clock = Date.now();
    const second = await makeHarness({
      dataDir,
      runs,
      steps: [textStep("the note was not written")],
      overrides: { now: () => new Date(clock) },
    });
    await second.manager.start();
    clock += 24 * 60 * 60 * 1000;
    expect((await pressCard(second, card, "once", ANA)).status).toBe("expired");
    await second.manager.idle();
    const out2 = second.outputs.for(thread());
    expect(outcomeLine(out2.card(card.pendingId))).toMatch(/^Expired/);
    expect(runs.count("c1")).toBe(0);
    await vi.waitFor(() =>
      expect(out2.closedTurns.map(RecordingOutput.textOf)).toContain("the note was not written"),
    );
    await second.manager.drain(1_000);
    await second.store.close();
  });

  it("keeps a queued follow-up through a restart and runs it after the resumed turn", async () => {
    const dataDir = tempDir();
    const runs = new ToolRuns();
    const defaults = { model: "m", provider: "scripted", mode: "interactive" as const, maxSteps: 10 };
    const overrides = { defaults: { ...defaults, queueMode: "followup" as const } };
    const first = await makeHarness({
      dataDir,
      runs,
      overrides,
      steps: [toolStep(["c1", "write_note", { text: "a" }])],
    });
    await first.manager.receive(message("write a"));
    const out1 = first.outputs.for(thread());
    const card = await first.outputs.until(() => out1.latestCards[0], "card");
    expect((await first.manager.receive(message("and then say bye"))).status).toBe("queued");
    await first.manager.drain(1_000);
    await first.store.close();

    const second = await makeHarness({
      dataDir,
      runs,
      overrides,
      steps: [textStep("wrote it"), textStep("bye")],
    });
    await second.manager.start();
    await pressCard(second, card, "once", ANA);
    await second.manager.idle();
    expect(runs.count("c1")).toBe(1);
    const texts = second.outputs.for(thread()).closedTurns.map((t) => RecordingOutput.textOf(t));
    expect(texts).toEqual(["wrote it", "bye"]);
    await second.store.close();
  });

  it("a typed answer after a restart answers the stored question and resumes the turn", async () => {
    const dataDir = tempDir();
    const ask = toolStep(["q1", "ask_user", { question: "Which file?", options: ["a", "b"] }]);
    const first = await makeHarness({ dataDir, steps: [ask] });
    await first.manager.receive(message("edit a file"));
    const out1 = first.outputs.for(thread());
    const card = await first.outputs.until(() => out1.latestCards[0], "question card");
    await first.manager.drain(1_000);
    await first.store.close();

    const second = await makeHarness({ dataDir, steps: [textStep("editing c.txt")] });
    await second.manager.start();
    expect(await second.manager.command(thread(), ANA, "status", [])).toMatch(
      /a turn is waiting to continue/,
    );
    expect((await second.manager.receive(message("c.txt, actually"))).status).toBe("answered");
    await second.manager.idle();
    const out2 = second.outputs.for(thread());
    expect(outcomeLine(out2.card(card.pendingId))).toBe("Answered by Ana (id U_ANA): c.txt, actually");
    expect(RecordingOutput.textOf(out2.closedTurns.at(-1)!)).toBe("editing c.txt");
    await second.store.close();
  });

  it("'stop' after a restart closes the suspended turn without running its call", async () => {
    const dataDir = tempDir();
    const runs = new ToolRuns();
    const first = await makeHarness({
      dataDir,
      runs,
      steps: [toolStep(["c1", "write_note", { text: "a" }])],
    });
    await first.manager.receive(message("write a"));
    const out1 = first.outputs.for(thread());
    const card = await first.outputs.until(() => out1.latestCards[0], "card");
    await first.manager.drain(1_000);
    await first.store.close();

    const second = await makeHarness({ dataDir, runs, steps: [] });
    await second.manager.start();
    expect(await second.manager.command(thread(), ANA, "stop", [])).toBe("Stopped the waiting turn.");
    await second.manager.idle();
    const out2 = second.outputs.for(thread());
    expect(outcomeLine(out2.card(card.pendingId))).toBe("Cancelled: the turn was stopped");
    expect(out2.closedTurns.at(-1)?.events.at(-1)).toMatchObject({
      type: "turn-completed",
      status: "interrupted",
    });
    expect(runs.count("c1")).toBe(0);
    const late = await pressCard(second, card, "once", ANA);
    expect(late.status).toBe("already_decided");
    await second.store.close();
  });

  it("survives SIGKILL between 'card posted' and 'press': the tool runs exactly once", async () => {
    const dataDir = tempDir();
    const runsFile = join(dataDir, "runs.jsonl");
    const marker = await runChildUntilMarker(dataDir, "approval", runsFile);
    const pendingId = marker.split(" ")[1]!;
    const h = await makeHarness({
      dataDir,
      runs: new ToolRuns(runsFile),
      steps: [textStep("finished after kill")],
    });
    await h.manager.start();
    const result = await h.manager.press(cardPress(thread(), pendingId, "once", ANA));
    expect(result.status).toBe("accepted");
    await h.manager.idle();
    expect(runsIn(runsFile).filter((r) => r.callId === "c1")).toHaveLength(1);
    const out = h.outputs.for(thread());
    expect(RecordingOutput.textOf(out.closedTurns.at(-1)!)).toBe("finished after kill");
    const sessionId = out.closedTurns.at(-1)!.sessionId;
    const history = await storedHistory(h.store.space("history"), sessionId);
    expect(history.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    await h.store.close();
  }, 60_000);

  it("answers a call that was running when the process was killed as 'interrupted', never re-running it", async () => {
    const dataDir = tempDir();
    const runsFile = join(dataDir, "runs.jsonl");
    await runChildUntilMarker(dataDir, "running", runsFile);
    const h = await makeHarness({ dataDir, runs: new ToolRuns(runsFile), steps: [textStep("recovered")] });
    await h.manager.start();
    await h.manager.idle();
    expect(runsIn(runsFile)).toHaveLength(1);
    const toolMessage = h.provider.lastRequest.messages.find((m) => m.role === "tool");
    expect(toolMessage).toMatchObject({ content: TOOL_RESULT.interruptedWhileRunning });
    expect(RecordingOutput.textOf(h.outputs.for(thread()).closedTurns.at(-1)!)).toBe("recovered");
    await h.store.close();
  }, 60_000);
});
