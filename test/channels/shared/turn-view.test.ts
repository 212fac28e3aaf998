import { describe, expect, it } from "vitest";
import {
  answerText,
  closeTurn,
  EMPTY_TURN,
  foldTurn,
  hasAnswerText,
  hasContent,
  isWaiting,
  notes,
  type TurnView,
  toolLineOf,
  toolLines,
  turnControl,
} from "../../../src/channels/shared/turn-view.js";
import { type AgentEvent, agentEvent } from "../../../src/core/events.js";
import { permissionRequired } from "./agent-events.js";

const fold = (events: readonly AgentEvent[], from: TurnView = EMPTY_TURN): TurnView =>
  events.reduce(foldTurn, from);

const ev = {
  text: (delta: string) => agentEvent({ type: "text-delta", delta }),
  done: (content: string, toolCalls = 0) =>
    agentEvent({ type: "assistant-message-done", content, step: 1, toolCalls }),
  reasoning: () => agentEvent({ type: "reasoning-delta", delta: "hm" }),
  start: (callId: string, preview: string, clearedBy?: string) =>
    agentEvent({
      type: "tool-call-started",
      callId,
      name: "run_command",
      args: {},
      preview,
      ...(clearedBy === undefined ? {} : { clearedBy }),
    }),
  end: (callId: string, status: "ok" | "error" | "denied", reason?: string) =>
    agentEvent({
      type: "tool-call-finished",
      callId,
      name: "run_command",
      status,
      outputPreview: "",
      files: [],
      durationMs: 1_200,
      ...(reason === undefined ? {} : { reason }),
    }),
  permission: (callId: string) => permissionRequired(callId),
  question: (callId: string) =>
    agentEvent({ type: "question-asked", callId, questions: [{ id: "q", question: "Which?", options: [] }] }),
  progress: (message: string) => agentEvent({ type: "notice", level: "progress", message }),
  info: (message: string) => agentEvent({ type: "notice", level: "info", message }),
  completed: (finalText: string, status: "completed" | "error" | "interrupted" = "completed") =>
    agentEvent({ type: "turn-completed", status, iterations: 3, finalText, usage: undefined }),
  error: (message: string, recoverable: boolean) => agentEvent({ type: "error", message, recoverable }),
};

describe("the turn view fold", () => {
  it("streams text into one item until a tool line opens the next, and a message's content wins", () => {
    const view = fold([
      ev.text("Let me "),
      ev.text("look."),
      ev.done("Let me look!"),
      ev.start("c1", "npm test"),
      ev.text("Green."),
    ]);
    expect(view.items.map((item) => item.kind)).toEqual(["text", "tool", "text"]);
    expect(answerText(view)).toBe("Let me look!\n\nGreen.");
  });

  it("drops a streamed message whose final content is empty", () => {
    const view = fold([ev.text("  "), ev.done("")]);
    expect(view.items).toEqual([]);
    expect(hasAnswerText(view)).toBe(false);
  });

  it("keeps the step's own streamed text for a live tail, starting afresh with the next step", () => {
    const first = fold([ev.text("one"), ev.done("one")]);
    expect(first.stepText).toBe("one");
    expect(first.latestAnswer).toBe("one");
    const second = fold([ev.text("two")], first);
    expect(second.stepText).toBe("two");
    expect(second.latestAnswer).toBe("one");
  });

  it("knows the answer is complete once a message calls no tool, until the agent goes on", () => {
    expect(fold([ev.text("Looking"), ev.done("Looking", 2)]).answered).toBe(false);
    const answered = fold([ev.text("Here"), ev.done("Here")]);
    expect(answered.answered).toBe(true);
    expect(fold([ev.text(" and more")], answered).answered).toBe(false);
    expect(fold([ev.start("c1", "ls")], answered).answered).toBe(false);
  });

  it("keeps a call's preview, position and what cleared it when it finishes", () => {
    const view = fold([
      ev.start("c1", "npm test", "allowed by reviewer: routine"),
      ev.start("c2", "ls"),
      ev.end("c1", "error", "exit 1"),
    ]);
    expect(toolLines(view).map((line) => line.callId)).toEqual(["c1", "c2"]);
    expect(toolLineOf(view, "c1")).toEqual({
      callId: "c1",
      name: "run_command",
      preview: "npm test",
      status: "error",
      durationMs: 1_200,
      reason: "exit 1",
      clearedBy: "allowed by reviewer: routine",
      started: true,
    });
  });

  it("marks a call that finishes without starting (a denial) as never started", () => {
    const view = fold([ev.end("c9", "denied", "denied by policy")]);
    expect(toolLineOf(view, "c9")).toMatchObject({ preview: "", status: "denied", started: false });
  });

  it("tracks what the turn waits for until the agent moves on", () => {
    const asking = fold([ev.permission("w1")]);
    expect(asking.waiting).toEqual({ kind: "approval", tool: "write_file" });
    expect(asking.activity).toEqual({ kind: "waiting" });
    expect(isWaiting(asking)).toBe(true);
    expect(toolLineOf(asking, "w1")).toMatchObject({ name: "write_file", waiting: "approval" });
    const running = fold([ev.start("w1", "notes.md")], asking);
    expect(running.waiting).toBeUndefined();
    expect(isWaiting(running)).toBe(false);
    expect(running.activity).toEqual({ kind: "running", call: { name: "run_command", preview: "notes.md" } });
    const question = fold([ev.question("q1")]);
    expect(question.waiting).toEqual({ kind: "answer" });
    expect(toolLineOf(question, "q1")).toMatchObject({
      name: "ask_user",
      preview: "Which?",
      waiting: "answer",
    });
  });

  it("shows reasoning until answer text arrives, without a new activity for every delta", () => {
    const thinking = fold([ev.start("c1", "ls"), ev.reasoning()]);
    expect(thinking.reasoning).toBe(true);
    expect(thinking.activity).toEqual({ kind: "thinking" });
    expect(foldTurn(thinking, ev.reasoning())).toBe(thinking);
    expect(fold([ev.text("Here")], thinking).reasoning).toBe(false);
  });

  it("lets a progress note replace the one before it without breaking the answer text", () => {
    const view = fold([ev.text("A"), ev.progress("step 1"), ev.progress("step 2"), ev.text("B")]);
    expect(view.items.map((item) => item.kind)).toEqual(["text", "note"]);
    expect(answerText(view)).toBe("AB");
    expect(notes(view)).toEqual([{ kind: "progress", message: "step 2" }]);
    expect(view.activity).toEqual({ kind: "progress", message: "step 2" });
    const lasting = fold([ev.info("heads up"), ev.progress("step 3")], view);
    expect(notes(lasting).map((note) => note.kind)).toEqual(["progress", "notice", "progress"]);
  });

  it("counts only lasting things as content", () => {
    expect(hasContent(fold([ev.progress("working")]))).toBe(false);
    expect(hasContent(fold([ev.info("note")]))).toBe(true);
    expect(hasContent(fold([ev.text("   ")]))).toBe(false);
  });

  it("takes the final text when nothing was streamed, and records how the turn ended", () => {
    const view = fold([ev.completed("The answer.")]);
    expect(answerText(view)).toBe("The answer.");
    expect(view.finalText).toBe("The answer.");
    expect(view.outcome).toEqual({ kind: "completed" });
    expect(turnControl(view)).toBeUndefined();
    expect(answerText(fold([ev.text("Streamed"), ev.completed("Other")]))).toBe("Streamed");
  });

  it("keeps the last error and the last unrecoverable one apart, and offers Retry after a failure", () => {
    const view = fold([
      ev.error("provider down", false),
      ev.error("turn failed unexpectedly", true),
      ev.completed("", "error"),
    ]);
    expect(view.fatalError).toBe("provider down");
    expect(view.lastError).toBe("turn failed unexpectedly");
    expect(notes(view)).toEqual([{ kind: "problem", message: "turn failed unexpectedly" }]);
    expect(turnControl(view)).toBe("retry");
    expect(turnControl(EMPTY_TURN)).toBe("stop");
  });

  it("ends a closed running turn unfinished, paused when a call waits for a person", () => {
    expect(closeTurn(fold([ev.text("half")])).outcome).toEqual({ kind: "unfinished", paused: false });
    expect(closeTurn(fold([ev.permission("w1")])).outcome).toEqual({ kind: "unfinished", paused: true });
    const done = fold([ev.completed("ok", "interrupted")]);
    expect(closeTurn(done)).toBe(done);
  });

  it("never changes a view it folds from, and hands out frozen views", () => {
    const before = fold([ev.text("a"), ev.start("c1", "ls")]);
    const snapshot = JSON.stringify(before);
    const after = fold([ev.text("b"), ev.end("c1", "ok"), ev.completed("ab")], before);
    expect(JSON.stringify(before)).toBe(snapshot);
    expect(after).not.toBe(before);
    expect(Object.isFrozen(after)).toBe(true);
    expect(Object.isFrozen(after.items)).toBe(true);
    expect(Object.isFrozen(after.items[0])).toBe(true);
  });
});
