/**
 * The engine's handling of the interactive tools: update_plan shows the plan, ask_user asks the
 * person through the injected Asker, propose_plan submits a plan to the PlanApprover (approval
 * switches the session's mode). With no collaborator injected the call gets a "not available
 * here" result; an interrupt while waiting answers it as not started.
 */
import { raceAbort } from "./abort.js";
import type { PlanStep, QuestionSpec } from "./events.js";
import type { PlanDecision, QuestionAnswers } from "./interaction.js";
import type { RawToolCall } from "./provider/provider.js";
import { failed, planApproved, planRejected, TOOL_RESULT } from "./tool-results.js";
import type { TurnContext } from "./turn-context.js";
import { ASK_USER, PROPOSE_PLAN, UPDATE_PLAN } from "../tools/interactive-tools.js";

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

/** Wait for a person, racing the turn's interrupt; undefined means interrupted. */
async function waitFor<T extends object>(ctx: TurnContext, pending: Promise<T>): Promise<T | undefined> {
  const raced = await raceAbort(pending, ctx.signal);
  if (raced.aborted || "interrupted" in raced.value) {
    ctx.interrupt();
    return undefined;
  }
  return raced.value;
}

async function askUser(ctx: TurnContext, call: RawToolCall, args: QuestionArgs): Promise<void> {
  const questions = questionsOf(args);
  const asker = ctx.deps.asker;
  if (!asker) {
    await ctx.answer({
      callId: call.id,
      name: ASK_USER,
      status: "error",
      content: TOOL_RESULT.askUnavailable,
    });
    return;
  }
  ctx.emit({ type: "question-asked", callId: call.id, questions });
  ctx.audit("approval_requested", call.id, ASK_USER, { interaction: "question", questions });
  let reply: QuestionAnswers | undefined;
  try {
    reply = await waitFor(ctx, asker({ callId: call.id, questions }, ctx.signal));
  } catch (error) {
    await ctx.answer({ callId: call.id, name: ASK_USER, status: "error", content: failed(String(error)) });
    return;
  }
  if (!reply || !("answers" in reply)) {
    ctx.audit("approval_resolved", call.id, ASK_USER, { interaction: "question", outcome: "interrupted" });
    await ctx.answer({
      callId: call.id,
      name: ASK_USER,
      status: "not_started",
      content: TOOL_RESULT.notStartedWhileWaiting,
    });
    return;
  }
  const answers = reply.answers;
  ctx.audit("approval_resolved", call.id, ASK_USER, { interaction: "question", outcome: "answered" });
  const content = JSON.stringify({
    answers: questions.map((q) => ({ question: q.question, answer: answers[q.id] ?? "" })),
  });
  await ctx.answer({ callId: call.id, name: ASK_USER, status: "ok", content });
}

async function proposePlan(ctx: TurnContext, call: RawToolCall, plan: string): Promise<void> {
  const approver = ctx.deps.planApprover;
  if (!approver) {
    await ctx.answer({
      callId: call.id,
      name: PROPOSE_PLAN,
      status: "error",
      content: TOOL_RESULT.planUnavailable,
    });
    return;
  }
  ctx.audit("approval_requested", call.id, PROPOSE_PLAN, { interaction: "plan" });
  let decision: PlanDecision | undefined;
  try {
    decision = await waitFor(ctx, approver({ callId: call.id, plan }, ctx.signal));
  } catch (error) {
    await ctx.answer({
      callId: call.id,
      name: PROPOSE_PLAN,
      status: "error",
      content: failed(String(error)),
    });
    return;
  }
  if (!decision || !("approved" in decision)) {
    ctx.audit("approval_resolved", call.id, PROPOSE_PLAN, { interaction: "plan", outcome: "interrupted" });
    await ctx.answer({
      callId: call.id,
      name: PROPOSE_PLAN,
      status: "not_started",
      content: TOOL_RESULT.notStartedWhileWaiting,
    });
    return;
  }
  ctx.audit("approval_resolved", call.id, PROPOSE_PLAN, {
    interaction: "plan",
    outcome: decision.approved ? `approved:${decision.mode}` : "rejected",
  });
  if (decision.approved) {
    ctx.setMode(decision.mode);
    await ctx.answer({
      callId: call.id,
      name: PROPOSE_PLAN,
      status: "ok",
      content: planApproved(decision.mode),
    });
  } else {
    await ctx.answer({
      callId: call.id,
      name: PROPOSE_PLAN,
      status: "denied",
      content: planRejected(decision.feedback),
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
      await ctx.answer({ callId: call.id, name, status: "ok", content: TOOL_RESULT.planUpdated });
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
