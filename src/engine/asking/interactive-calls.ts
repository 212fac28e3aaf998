/**
 * The engine's handling of the interactive tools: update_plan shows the plan, ask_user asks the
 * person through the injected Asker, propose_plan submits a plan to the PlanApprover (approval
 * switches the session's mode). With no collaborator injected the call gets a "not available
 * here" result; an interrupt while waiting answers it as not started.
 */
import { raceAbort } from "../../core/abort.js";
import type { PlanStep, QuestionSpec } from "../../core/events.js";
import type { RawToolCall } from "../provider/provider.js";
import { failed, planApproved, planRejected, TOOL_RESULT } from "../tool-results.js";
import type { CallAnswer, TurnContext } from "../turn-context.js";
import { ASK_USER, PROPOSE_PLAN, UPDATE_PLAN } from "../../tools/interactive-tools.js";

interface QuestionArgs {
  readonly question?: string;
  readonly options?: readonly string[];
  readonly questions?: ReadonlyArray<{ readonly question: string; readonly options?: readonly string[] }>;
}

/** The questions of an ask_user call, with stable ids (q1, q2, …). */
export function questionsOf(args: QuestionArgs): QuestionSpec[] {
  const list: Array<{ question: string; options?: readonly string[] | undefined }> = [];
  if (args.question?.trim()) list.push({ question: args.question.trim(), options: args.options });
  for (const q of args.questions ?? []) list.push(q);
  return list.map((q, i) => ({ id: `q${i + 1}`, question: q.question, options: q.options ?? [] }));
}

type Interrupted = { readonly interrupted: true };

/** Wait for a person, racing the turn's interrupt; undefined means interrupted. */
async function waitFor<T extends object>(
  ctx: TurnContext,
  pending: Promise<T>,
): Promise<Exclude<T, Interrupted> | undefined> {
  const raced = await raceAbort(pending, ctx.signal);
  if (raced.aborted || "interrupted" in raced.value) {
    ctx.interrupt();
    return undefined;
  }
  return raced.value as Exclude<T, Interrupted>;
}

/** Store the result of an interactive call. */
function answer(
  ctx: TurnContext,
  call: RawToolCall,
  name: string,
  status: CallAnswer["status"],
  content: string,
): Promise<void> {
  return ctx.answer({ callId: call.id, name, status, content });
}

/**
 * Put a call to a person (audited) and wait for the reply. When there is none — the request
 * failed or the turn was interrupted — the call is answered here and the result is undefined.
 */
async function consult<T extends object>(
  ctx: TurnContext,
  call: RawToolCall,
  name: string,
  requested: { readonly interaction: "question" | "plan" } & Record<string, unknown>,
  ask: () => Promise<T>,
): Promise<Exclude<T, Interrupted> | undefined> {
  ctx.audit("approval_requested", call.id, name, requested);
  let reply: Exclude<T, Interrupted> | undefined;
  try {
    reply = await waitFor(ctx, ask());
  } catch (error) {
    await answer(ctx, call, name, "error", failed(String(error)));
    return undefined;
  }
  if (!reply) {
    ctx.audit("approval_resolved", call.id, name, {
      interaction: requested.interaction,
      outcome: "interrupted",
    });
    await answer(ctx, call, name, "not_started", TOOL_RESULT.notStartedWhileWaiting);
  }
  return reply;
}

async function askUser(ctx: TurnContext, call: RawToolCall, args: QuestionArgs): Promise<void> {
  const questions = questionsOf(args);
  const asker = ctx.deps.asker;
  if (!asker) return answer(ctx, call, ASK_USER, "error", TOOL_RESULT.askUnavailable);
  ctx.emit({ type: "question-asked", callId: call.id, questions });
  const reply = await consult(ctx, call, ASK_USER, { interaction: "question", questions }, () =>
    asker({ callId: call.id, questions, provenance: ctx.provenance }, ctx.signal),
  );
  if (!reply) return;
  ctx.audit("approval_resolved", call.id, ASK_USER, { interaction: "question", outcome: "answered" });
  const content = JSON.stringify({
    answers: questions.map((q) => ({ question: q.question, answer: reply.answers[q.id] ?? "" })),
  });
  // Who answered travels with the result: the reviewer counts only the requester's as theirs. The
  // files typed answers came with travel on it too: the model is shown them after the results.
  await ctx.answer({
    callId: call.id,
    name: ASK_USER,
    status: "ok",
    content,
    by: reply.by,
    answerFiles: reply.files,
  });
}

async function proposePlan(ctx: TurnContext, call: RawToolCall, plan: string): Promise<void> {
  const approver = ctx.deps.planApprover;
  if (!approver) return answer(ctx, call, PROPOSE_PLAN, "error", TOOL_RESULT.planUnavailable);
  const decision = await consult(ctx, call, PROPOSE_PLAN, { interaction: "plan" }, () =>
    approver({ callId: call.id, plan, provenance: ctx.provenance }, ctx.signal),
  );
  if (!decision) return;
  ctx.audit("approval_resolved", call.id, PROPOSE_PLAN, {
    interaction: "plan",
    outcome: decision.approved ? `approved:${decision.mode}` : "rejected",
  });
  if (decision.approved) {
    ctx.setMode(decision.mode, decision.by);
    await answer(ctx, call, PROPOSE_PLAN, "ok", planApproved(decision.mode));
  } else {
    // The files typed feedback came with travel on the result, as a typed answer's do (askUser).
    await ctx.answer({
      callId: call.id,
      name: PROPOSE_PLAN,
      status: "denied",
      content: planRejected(decision.feedback),
      answerFiles: decision.files,
    });
  }
}

/** Handle an allowed interactive call and store its result. */
export async function runInteractiveCall(
  ctx: TurnContext,
  call: RawToolCall,
  name: string,
  args: Record<string, unknown>,
): Promise<void> {
  switch (name) {
    case UPDATE_PLAN: {
      const steps = args.steps as readonly PlanStep[];
      ctx.emit({ type: "plan-updated", steps });
      await answer(ctx, call, name, "ok", TOOL_RESULT.planUpdated);
      return;
    }
    case ASK_USER:
      return askUser(ctx, call, args as QuestionArgs);
    case PROPOSE_PLAN:
      return proposePlan(ctx, call, String(args.plan));
    default:
      throw new Error(`not an interactive tool: ${name}`);
  }
}
