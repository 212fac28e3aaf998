/** Scripted turns shared by the console and CLI tests: an approval turn and a question turn. */
import type { Card } from "../../../src/core/card.js";
import type { TurnScript } from "./fake-service.js";

export const approvalCard: Card = {
  pendingId: "ap1",
  kind: "approval",
  title: "Approve: run_command",
  blocks: [
    { kind: "text", text: "The agent wants to run a command." },
    { kind: "code", text: "npm test" },
  ],
  buttons: [
    { action: "once", label: "Approve", style: "primary" },
    { action: "always_command", label: "Always allow `npm`", style: "default" },
    { action: "deny", label: "Deny", style: "danger" },
  ],
  footer: "or reply approve ap1 / deny ap1",
};

const questionCard: Card = {
  pendingId: "q1",
  kind: "question",
  title: "Question",
  blocks: [{ kind: "text", text: "Where should I deploy?" }],
  buttons: [
    { action: "q0:o0", label: "staging", style: "default" },
    { action: "q0:o1", label: "production", style: "default" },
  ],
};

export const runTests: TurnScript = async (kit) => {
  await kit.emit({ type: "plan-updated", steps: [{ title: "Run the tests", status: "in_progress" }] });
  await kit.emit({
    type: "tool-call-started",
    callId: "c1",
    name: "run_command",
    args: {},
    preview: "npm test",
  });
  const decision = await kit.ask(approvalCard);
  if (decision === "deny") {
    await kit.emit({
      type: "tool-call-finished",
      callId: "c1",
      name: "run_command",
      status: "denied",
      outputPreview: "denied by the user",
      files: [],
      durationMs: 0,
    });
  } else {
    await kit.emit({
      type: "tool-call-finished",
      callId: "c1",
      name: "run_command",
      status: "ok",
      outputPreview: "12 passed",
      files: [],
      durationMs: 3200,
    });
    await kit.emit({ type: "text-delta", delta: "All 12 tests " });
    await kit.emit({ type: "text-delta", delta: "pass." });
  }
  await kit.emit({
    type: "turn-completed",
    status: "completed",
    iterations: 2,
    finalText: "",
    usage: undefined,
  });
};

export const deploy: TurnScript = async (kit) => {
  const answer = await kit.ask(questionCard);
  await kit.emit({ type: "text-delta", delta: `Deploying: ${answer}` });
  await kit.emit({
    type: "turn-completed",
    status: "completed",
    iterations: 1,
    finalText: "",
    usage: undefined,
  });
};
