/**
 * Reviewer test support: a scripted ReviewerModel (answers, failures, hangs; records every request)
 * and a harness that wires a ReviewerGate and a denial recorder into the engine test harness.
 */
import type { ReviewerMessage } from "../../../src/engine/reviewer/review-input.js";
import { Reviewer } from "../../../src/engine/reviewer/reviewer.js";
import { type ReviewerDenial, ReviewerGate } from "../../../src/engine/reviewer/reviewer-gate.js";
import type { ReviewerCompletion, ReviewerModel } from "../../../src/engine/reviewer/reviewer-model.js";
import type { ConversationExecutionRequest } from "../../../src/core/request.js";
import { TurnContext, type TurnPersistence } from "../../../src/engine/turn-context.js";
import { type HarnessOptions, makeHarness } from "../helpers/harness.js";
import { freshPermissions } from "../helpers/test-tools.js";

export type ScriptedAnswer = { readonly text: string } | { readonly error: Error } | { readonly hang: true };

/** A ReviewerModel answering from a script (the last answer repeats). */
export class ScriptedReviewerModel implements ReviewerModel {
  readonly requests: (readonly ReviewerMessage[])[] = [];
  constructor(private readonly answers: ScriptedAnswer[]) {}

  async complete(messages: readonly ReviewerMessage[], signal: AbortSignal): Promise<ReviewerCompletion> {
    this.requests.push(messages);
    const answer = this.answers[Math.min(this.requests.length - 1, this.answers.length - 1)];
    if (!answer) throw new Error("no scripted reviewer answer");
    if ("error" in answer) throw answer.error;
    if ("hang" in answer)
      return new Promise((_, reject) =>
        signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true }),
      );
    return { text: answer.text, tokensIn: 100, tokensOut: 10 };
  }

  /** Everything the reviewer was sent, as one string. */
  seen(index = 0): string {
    return (this.requests[index] ?? []).map((m) => m.content).join("\n");
  }
}

/** A verdict answer in the JSON the reviewer is asked for. */
export function verdict(kind: "allow" | "deny" | "unsure", reason = `${kind} because`): ScriptedAnswer {
  return { text: JSON.stringify({ verdict: kind, reason }) };
}

/** The engine harness with a reviewer on `answers` (and shadow when asked). */
export function reviewedHarness(
  answers: ScriptedAnswer[],
  opts: HarnessOptions & { shadow?: boolean; timeoutMs?: number } = {},
) {
  const model = new ScriptedReviewerModel(answers);
  const gate = new ReviewerGate({
    reviewer: new Reviewer({ model, timeoutMs: opts.timeoutMs ?? 5_000 }),
    shadow: opts.shadow ?? false,
  });
  const denials: ReviewerDenial[] = [];
  const harness = makeHarness({
    ...opts,
    options: {
      reviewer: gate,
      reviewerDenials: async (denial) => {
        denials.push(denial);
      },
      ...opts.options,
    },
  });
  return { ...harness, model, gate, denials };
}

/** A TurnContext for `request` on a reviewed harness's parts (with `persistence` when given), outside a turn. */
export function harnessTurnContext(
  h: ReturnType<typeof reviewedHarness>,
  request: ConversationExecutionRequest,
  persistence?: TurnPersistence,
): TurnContext {
  const deps = {
    provider: h.provider,
    registry: h.registry,
    permissions: freshPermissions(),
    grants: h.grants,
    facts: h.facts,
    now: () => new Date(),
    persistence,
  };
  return new TurnContext(deps, request, () => undefined);
}
