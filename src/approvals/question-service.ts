/**
 * QuestionService: the engine-facing Asker of one session (ask_user), built on the PendingHub.
 * Questions are durable and authorised like approvals; options become buttons, several questions
 * share one card, and the asker's next thread message answers the first open question.
 */
import type { Asker, QuestionAnswers, QuestionRequest } from "../engine/asking/ports.js";
import { provenanceField } from "./approval-card.js";
import type { PendingHub } from "./pending-hub.js";
import type { AskContext } from "./pending-hub-types.js";
import { ASK_USER } from "../tools/interactive-tools.js";
import type { PendingItem, PendingQuestion } from "./pending-item.js";
import { notShownError } from "./pending-store.js";
import { answerersOf } from "./question-card.js";

export const EXPIRED_ANSWER = "(no answer: the question expired)";

/**
 * What a settled question group means for the engine. A group whose card could not be shown was
 * put to nobody: that is an error for the model to act on (ask in its reply, or with fewer or
 * shorter options), not a stop.
 */
export function questionAnswersOf(item: PendingItem, signal: AbortSignal): QuestionAnswers {
  const notShown = notShownError(
    item,
    signal,
    "The question",
    "so nobody can answer it. Ask in your reply instead, or with fewer and shorter options.",
  );
  if (notShown) throw notShown;
  if (signal.aborted || item.status === "cancelled" || item.kind !== "question") return { interrupted: true };
  const answers: Record<string, string> = {};
  for (const question of item.questions) answers[question.id] = item.answers[question.id] ?? EXPIRED_ANSWER;
  const files = item.questions.flatMap((question) => item.answerFiles?.[question.id] ?? []);
  // Whose answers these are: the requester's only if they gave every one (the reviewer counts
  // only the requester's as theirs), else one of the others'.
  const answerers = answerersOf(item);
  const given = item.questions.flatMap((q) => (item.answers[q.id] === undefined ? [] : [answerers[q.id]!]));
  const requester = item.requester;
  const other = given.find((p) => p.platform !== requester.platform || p.userId !== requester.userId);
  const by = (other ?? given[0])?.userId;
  return { answers, ...(by === undefined ? {} : { by }), ...(files.length > 0 ? { files } : {}) };
}

/** Builds per-session askers. */
export class QuestionService {
  constructor(private readonly hub: PendingHub) {}

  /** An Asker for the session; `context` is read when the question is asked. */
  askerFor(context: () => AskContext): Asker {
    return async (request: QuestionRequest, signal: AbortSignal) => {
      if (request.questions.length === 0) return { answers: {} };
      const ctx = context();
      const build = (argsHash: string): PendingQuestion => ({
        ...this.hub.base(ctx, request.callId, argsHash),
        kind: "question",
        questions: request.questions.map((q) => ({
          id: q.id,
          question: q.question,
          options: [...q.options],
        })),
        answers: {},
        ...provenanceField(request.provenance),
        ...(ctx.woken ? { woken: true } : {}),
      });
      const fallback = { tool: ASK_USER, args: { questions: request.questions } };
      const item = await this.hub.obtain("question", ctx, request.callId, fallback, build, signal);
      return questionAnswersOf(item, signal);
    };
  }
}
