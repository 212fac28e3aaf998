/**
 * The reviewed path of an "ask" decision: what happens between the permission engine saying "ask
 * a person" and the approval card. In order:
 *
 * 1. Human floor — a call whose floor is a person never reaches the reviewer (nor an "Allow
 *    anyway" grant): a turn woken by channel content, a command running a file the agent
 *    downloaded into the workspace, arguments too long to show the reviewer whole, and anything the
 *    engine marks human-only or gives a person's floor (a read that widens the conversation's
 *    audience). Hard denies never get here at all (they are denials, not asks).
 * 2. "Allow anyway" — a one-shot grant a person gave from a reviewer's denial, bound to this exact
 *    tool and canonical arguments, to the person whose call was denied and to an expiry, is
 *    consumed by the first matching call in a turn of that person before it expires.
 * 3. Reviewed mode — the reviewer judges the call unless the retry guard tripped (two reviewer
 *    denials in this turn): allow runs the call without a card (its note says so), unsure shows
 *    the ordinary card, deny answers the call. Deny asymmetry: the person is shown the full reason
 *    and the whole call, as an approval card shows it (with "Allow anyway"); the model gets a
 *    short refusal that tells it to ask the person, not to reshape the request.
 * 4. Interactive mode with shadow on — the card is shown as usual, and a background verdict is
 *    audited next to it (joined to the person's decision by call id); it never changes anything.
 */
import type { AnyTool } from "../../core/tool.js";
import type { PermissionMode } from "../../core/modes.js";
import { trustedCategory } from "../../tools/trusted-category.js";
import { cardPreview } from "../asking/approval-request.js";
import { canonicalJson } from "../call-identity.js";
import { downloadExecution } from "../permissions/download-execution.js";
import { type Decision, commandOf } from "../permissions/permission-engine.js";
import type { RawToolCall } from "../provider/provider.js";
import { TOOL_RESULT } from "../tool-results.js";
import type { TurnContext } from "../turn-context.js";
import {
  attachedFilesFact,
  callFacts,
  fitsReview,
  outsideReadsFact,
  type ReviewInput,
  reviewLinesOf,
} from "./review-input.js";
import type { ReviewStage } from "./reviewer.js";
import type { ReviewerDenial } from "./reviewer-gate.js";
import type { ReviewerVerdict } from "./verdict.js";

/** What the model reads for a call the reviewer denied: short, non-diagnostic, points at the person. */
export const REVIEWER_DENIED_RESULT =
  "Not run: an automatic safety check declined this call. Do not retry it or change it to get past the check. Tell the user what you wanted to do and why; they can allow it.";

/** The status-line reason of a reviewer denial. */
export const REVIEWER_DENIED_REASON = "blocked by the safety reviewer";

export type ScreenOutcome =
  /** Run without a card; `note` says who allowed it. */
  | { readonly kind: "run"; readonly note: string }
  /** The call was answered here (denied, or the turn stopped during the review). */
  | { readonly kind: "answered" }
  /** Ask a person with the ordinary card. */
  | { readonly kind: "card" };

const CARD: ScreenOutcome = Object.freeze({ kind: "card" });

/** Why this call's floor is a person, or undefined when a reviewer may decide it. */
export function humanFloor(
  ctx: TurnContext,
  tool: AnyTool,
  args: Record<string, unknown>,
  decision: Decision,
): string | undefined {
  if (decision.humanOnly) return "the call is marked human-only";
  if (decision.personFloor !== undefined) return decision.personFloor;
  if (ctx.provenance.kind === "channel_content") return "the turn was woken by channel content";
  if (!fitsReview(args)) return "the arguments are too long to show the reviewer whole";
  const command = commandOf(tool, args);
  // Against the files recorded now, on the engine's parse of the command (parsed-script.ts keeps the last).
  return command === undefined ? undefined : downloadExecution(command, ctx.deps.facts.downloadedFiles);
}

function inputOf(
  ctx: TurnContext,
  tool: AnyTool,
  args: Record<string, unknown>,
  written: readonly string[],
): ReviewInput {
  const requester = ctx.request.requester.userId;
  const outside = [outsideReadsFact(ctx.outsideReads()), attachedFilesFact(ctx.attachedFiles())].filter(
    (fact): fact is string => fact !== undefined,
  );
  return {
    ...reviewLinesOf(ctx.history, requester),
    tool: { name: tool.name, description: tool.description, category: trustedCategory(tool, args) },
    args,
    facts: [...callFacts(ctx.history, ctx.deps.facts, args, written, commandOf(tool, args)), ...outside],
  };
}

function auditVerdict(
  ctx: TurnContext,
  call: RawToolCall,
  tool: AnyTool,
  stage: ReviewStage,
  v: ReviewerVerdict,
) {
  ctx.audit("reviewer_verdict", call.id, tool.name, {
    stage,
    verdict: v.verdict,
    reason: v.reason,
    tokensIn: v.tokensIn,
    tokensOut: v.tokensOut,
    latencyMs: v.latencyMs,
    ...(v.failure ? { failure: v.failure } : {}),
  });
}

/**
 * Decide what becomes of an "ask" before any card (see the module header), in `mode`: the mode
 * the call's step was decided in (tool-authorizer.ts StepScope). `written`: the files the step's
 * calls before this one write (step-writes.ts), for the reviewer's facts.
 */
export async function screenAsk(
  ctx: TurnContext,
  call: RawToolCall,
  tool: AnyTool,
  args: Record<string, unknown>,
  decision: Decision,
  summary: string,
  mode: PermissionMode,
  written: readonly string[],
): Promise<ScreenOutcome> {
  const gate = ctx.deps.reviewer;
  const floor = humanFloor(ctx, tool, args, decision);
  if (floor !== undefined) {
    if (gate && mode === "reviewed") ctx.audit("reviewer_skipped", call.id, tool.name, { reason: floor });
    return CARD;
  }
  const wanted = { tool: tool.name, args: canonicalJson(args), requester: ctx.requesterId };
  if (ctx.deps.grants.consumeOnce(wanted, ctx.deps.now())) {
    ctx.audit("allow_anyway_used", call.id, tool.name, {});
    return { kind: "run", note: "allowed anyway by a person (one time, this exact call)" };
  }
  if (!gate) return CARD;
  if (mode === "interactive" && gate.shadow) {
    const input = inputOf(ctx, tool, args, written);
    gate.track(gate.reviewer.review(input, "shadow").then((v) => auditVerdict(ctx, call, tool, "shadow", v)));
    return CARD;
  }
  if (mode !== "reviewed") return CARD;
  if (!gate.mayDecide(ctx.request.turnId)) {
    ctx.audit("reviewer_skipped", call.id, tool.name, {
      reason: "retry guard: the reviewer denied twice in this turn",
    });
    return CARD;
  }
  const verdict = await gate.reviewer.review(inputOf(ctx, tool, args, written), "live", ctx.signal);
  auditVerdict(ctx, call, tool, "live", verdict);
  if (ctx.aborted) {
    await ctx.answer({
      callId: call.id,
      name: tool.name,
      status: "not_started",
      content: TOOL_RESULT.notStarted,
    });
    return { kind: "answered" };
  }
  if (verdict.verdict === "allow") return { kind: "run", note: `allowed by reviewer: ${verdict.reason}` };
  if (verdict.verdict === "unsure") return CARD;
  gate.noteDenial(ctx.request.turnId);
  await ctx.answer({
    callId: call.id,
    name: tool.name,
    status: "denied",
    content: REVIEWER_DENIED_RESULT,
    reason: REVIEWER_DENIED_REASON,
  });
  const shown = await cardPreview(ctx, tool, args);
  await reportDenial(ctx, {
    callId: call.id,
    tool: tool.name,
    args,
    summary,
    shown: { summary: shown.summary, ...(shown.detail ? { detail: shown.detail } : {}) },
    reason: verdict.reason,
  });
  return { kind: "answered" };
}

/** Show the denial with its full reason: through the session's reporter, else as a notice. */
async function reportDenial(ctx: TurnContext, denial: ReviewerDenial): Promise<void> {
  const text = `The safety reviewer blocked ${denial.summary}: ${denial.reason}`;
  const reporter = ctx.deps.reviewerDenials;
  if (!reporter) return ctx.emit({ type: "notice", level: "warning", message: text });
  try {
    await reporter(denial);
  } catch (error) {
    ctx.emit({
      type: "notice",
      level: "warning",
      message: `${text} (the Allow anyway card failed: ${String(error)})`,
    });
  }
}
