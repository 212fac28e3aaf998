/**
 * ApprovalService: the engine-facing Approver and PlanApprover of one session, built on the
 * PendingHub. An approval is keyed by tool call id and the hash of tool name + arguments, so on
 * durable resume the engine's repeated request finds the recorded decision instead of a new card,
 * and a decision can never apply to a call with different arguments.
 */
import { cardPerson, decidersOf } from "./authorisation.js";
import type {
  ApprovalOutcome,
  ApprovalVerdict,
  Approver,
  PermissionRequest,
  PlanApprover,
  PlanDecision,
  PlanProposal,
} from "../engine/asking/ports.js";
import { APPROVE_ONCE, DENY, provenanceField } from "./approval-card.js";
import type { PendingHub } from "./pending-hub.js";
import type { AskContext } from "./pending-hub-types.js";
import { PROPOSE_PLAN } from "../tools/interactive-tools.js";
import type { PendingApproval, PendingItem, PendingPlan } from "./pending-item.js";
import { notShownError } from "./pending-store.js";

/**
 * What a settled approval means for the engine, with who decided it. An approval whose card could
 * not be shown was put to nobody: the call does not run and gets an error the model acts on (it
 * says in its reply what it wanted to do), not a stop.
 */
export function approvalVerdictOf(item: PendingItem, signal: AbortSignal): ApprovalVerdict {
  const notShown = notShownError(
    item,
    signal,
    "The approval card",
    "so this call did not run. Tell the person in your reply what you wanted to do and why.",
  );
  if (notShown) throw notShown;
  const outcome = approvalOutcomeOf(item, signal);
  const decider = item.decision?.by;
  const shown =
    item.kind === "approval"
      ? {
          shown: {
            summary: item.argSummary,
            ...(item.detail ? { detail: item.detail } : {}),
            ...(item.fingerprint === undefined ? {} : { fingerprint: item.fingerprint }),
          },
        }
      : {};
  if (decider === undefined) return { outcome, ...shown };
  return { outcome, by: cardPerson(decider), ...shown };
}

/** What a settled approval means for the engine. */
function approvalOutcomeOf(item: PendingItem, signal: AbortSignal): ApprovalOutcome {
  if (signal.aborted || item.status === "cancelled") return "interrupted";
  if (item.status === "expired") return "deny";
  const action = item.decision?.action;
  if (action === APPROVE_ONCE) return "once";
  if (item.kind === "approval" && item.alwaysOptions.some((option) => option === action))
    return action as ApprovalOutcome;
  return DENY;
}

/**
 * What a settled plan proposal means for the engine, with, for an approval, who approved it: the
 * mode switch it makes is theirs (the session records them as the mode's setter). A plan whose
 * card could not be shown is an error for the model to act on, not a stop.
 */
export function planDecisionOf(item: PendingItem, signal: AbortSignal): PlanDecision {
  const notShown = notShownError(
    item,
    signal,
    "The plan card",
    "so nobody can approve the plan. Write the plan in your reply and ask the person to approve it there.",
  );
  if (notShown) throw notShown;
  if (signal.aborted || item.status === "cancelled") return { interrupted: true };
  if (item.status === "expired") return { approved: false, feedback: "The plan was not approved in time." };
  const action = item.decision?.action;
  const by = item.decision?.by;
  const approver = by ? { by: { id: by.userId, name: by.name } } : {};
  if (action === "plan_interactive") return { approved: true, mode: "interactive", ...approver };
  if (action === "plan_auto") return { approved: true, mode: "auto", ...approver };
  const note = item.decision?.note;
  const files = item.decision?.files;
  return { approved: false, ...(note ? { feedback: note } : {}), ...(files?.length ? { files } : {}) };
}

/** Builds per-session approvers. */
export class ApprovalService {
  constructor(private readonly hub: PendingHub) {}

  /** An Approver for the session; `context` is read when a request arrives (the turn's requester). */
  approverFor(context: () => AskContext): Approver {
    const asked = (callId: string) => this.hub.raised("approval", context(), callId);
    const approve = async (request: PermissionRequest, signal: AbortSignal) => {
      const ctx = context();
      const build = (argsHash: string): PendingApproval => {
        const base = this.hub.base(ctx, request.callId, argsHash);
        return {
          ...base,
          ...(request.onlyLooseners
            ? { allowedApprovers: this.hub.steeringDeciders(base.target, base.mayLoosen) }
            : {}),
          kind: "approval",
          tool: request.tool,
          argSummary: request.preview.summary,
          reason: request.reason,
          ...(request.preview.detail ? { detail: { ...request.preview.detail } } : {}),
          alwaysOptions: [...request.alwaysOptions],
          ...provenanceField(request.provenance),
          ...(request.outsideReads === undefined ? {} : { outsideReads: request.outsideReads }),
          ...(request.attachedFiles === undefined ? {} : { attachedFiles: request.attachedFiles }),
          ...(request.preview.fingerprint === undefined ? {} : { fingerprint: request.preview.fingerprint }),
        };
      };
      const fallback = { tool: request.tool, args: request.args };
      const item = await this.hub.obtain("approval", ctx, request.callId, fallback, build, signal);
      return approvalVerdictOf(item, signal);
    };
    return Object.assign(approve, { asked });
  }

  /** A PlanApprover for the session, whose approvals say who approved them. */
  planApproverFor(context: () => AskContext): PlanApprover {
    return async (proposal: PlanProposal, signal: AbortSignal) => {
      const ctx = context();
      const build = (argsHash: string): PendingPlan => {
        const plan: PendingPlan = {
          ...this.hub.base(ctx, proposal.callId, argsHash),
          kind: "plan",
          plan: proposal.plan,
          ...provenanceField(proposal.provenance),
        };
        return { ...plan, allowedApprovers: decidersOf(plan) };
      };
      const fallback = { tool: PROPOSE_PLAN, args: { plan: proposal.plan } };
      const item = await this.hub.obtain("plan", ctx, proposal.callId, fallback, build, signal);
      return planDecisionOf(item, signal);
    };
  }
}
