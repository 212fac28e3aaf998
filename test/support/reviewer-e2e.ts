/**
 * Reviewed-mode support for the end-to-end tests: one fake-OpenAI handler that plays both the
 * agent (streamed requests: call write_note, then report the tool's result) and the reviewer
 * (non-streamed requests: the verdict the test chose), and the stack extension that gives every
 * session a reviewer on the fake endpoint and starts sessions in reviewed (or interactive) mode.
 */
import type { ProviderClient } from "../../src/engine/provider/provider.js";
import { Reviewer } from "../../src/engine/reviewer/reviewer.js";
import { ReviewerGate } from "../../src/engine/reviewer/reviewer-gate.js";
import { OpenAIReviewerModel } from "../../src/engine/reviewer/reviewer-model.js";
import type { PermissionMode } from "../../src/core/modes.js";
import type { SessionManagerOptions } from "../../src/sessions/session-manager.js";
import type { FakeBody, FakeHandler, FakeOpenAI } from "../fakes/fake-openai.js";
import { sessionTestRegistry, type ToolRuns } from "../sessions/helpers/test-tools.js";
import { engineFactory } from "./session-stack.js";

export type ScriptVerdict = "allow" | "deny" | "unsure";

/** Whether a fake-OpenAI request is the reviewer's (no streaming, no tools). */
export function isReviewerRequest(body: FakeBody): boolean {
  return body?.stream !== true && body?.tools === undefined;
}

/**
 * Agent: each user message asks for write_note with the message text; a tool result is reported
 * back ("Tool said: …"). Reviewer: `verdict(text)` for the note's text, with `reason`.
 */
export function reviewedScript(
  verdict: (noteText: string) => ScriptVerdict,
  reason = "REVIEWER-REASON",
): FakeHandler {
  return ({ body }) => {
    const messages: { role: string; content?: unknown }[] = body.messages ?? [];
    if (isReviewerRequest(body)) {
      const shown = String(messages.at(-1)?.content ?? "");
      const text = /"text": "([^"]*)"/.exec(shown)?.[1] ?? "";
      return { text: JSON.stringify({ verdict: verdict(text), reason: `${reason} (${text})` }) };
    }
    const last = messages.at(-1);
    if (last?.role === "tool") return { text: `Tool said: ${String(last.content)}` };
    const user = String([...messages].reverse().find((m) => m.role === "user")?.content ?? "");
    const note = user.replace(/(<@\w+>|@\w+_bot)\s*/g, "").trim();
    return { toolCalls: [{ name: "write_note", arguments: JSON.stringify({ text: note }) }] };
  };
}

/** The reviewer's requests the fake received, in order. */
export function reviewerRequests(openai: FakeOpenAI): FakeBody[] {
  return openai.requests.filter(isReviewerRequest);
}

/** The session-manager defaults and engine factory of a reviewed stack. */
export function reviewedStack(options: {
  readonly openai: FakeOpenAI;
  readonly provider: ProviderClient;
  readonly runs: ToolRuns;
  readonly mode: PermissionMode;
  readonly shadow?: boolean;
}): { createEngine: ReturnType<typeof engineFactory>; manager: Partial<SessionManagerOptions> } {
  const reviewer = new Reviewer({
    model: new OpenAIReviewerModel({
      model: "fake-reviewer",
      baseURL: options.openai.baseURL,
      apiKey: "test",
    }),
    timeoutMs: 10_000,
  });
  return {
    createEngine: engineFactory(options.provider, sessionTestRegistry(options.runs), undefined, () => ({
      reviewer: new ReviewerGate({ reviewer, shadow: options.shadow ?? false }),
    })),
    manager: {
      defaults: {
        model: "fake-model",
        provider: "openai",
        mode: options.mode,
        maxSteps: 10,
        queueMode: "steer",
      },
    },
  };
}
