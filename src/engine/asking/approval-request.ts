/**
 * The asking half of authorisation: a call the permission engine says to "ask" about goes to a
 * person through the injected Approver port — the approval card's request (with the tool's own
 * preview), the permission-required event, the audit records, the wait (interruptible), and what
 * the answer does: run once, add a standing grant, deny, or stop the turn. A call of a tool that
 * binds its preview whose preview fails is answered with that failure before any card (no approval
 * could let it run). The durable side of the round trip (cards, first press wins, restarts) is
 * src/approvals, behind the port.
 */
import type { AnyTool, ToolPreview } from "../../core/tool.js";
import { trustedCategory } from "../../tools/trusted-category.js";
import type { CardPerson } from "../../core/card.js";
import type { AlwaysOption } from "../../core/events.js";
import { raceAbort } from "../../core/abort.js";
import type { RawToolCall } from "../provider/provider.js";
import type { Grant } from "../permissions/grants.js";
import { type Decision, domainOf } from "../permissions/permission-engine.js";
import { hopCallId } from "../history-calls.js";
import { failed, preview, TOOL_RESULT } from "../tool-results.js";
import type { TurnContext } from "../turn-context.js";
import {
  type ApprovalOutcome,
  type CardPreview,
  type PermissionNotice,
  type PermissionRequest,
  sameContent,
} from "./ports.js";

const OUTCOMES: ReadonlySet<string> = new Set<ApprovalOutcome>([
  "once",
  "always_tool",
  "always_command",
  "always_domain",
  "readonly_session",
  "deny",
  "interrupted",
]);

/** One line naming the call, for an approval card whose tool has no preview of its own. */
/** Characters of a call's arguments a summary shows. */
const SUMMARY_ARGS_CHARS = 160;

export function summarizeCall(name: string, args: Readonly<Record<string, unknown>>): string {
  return `${name} ${preview(JSON.stringify(args), SUMMARY_ARGS_CHARS)}`;
}

/**
 * `shown` with the call's arguments in full as its detail when it has none and its summary could
 * not hold them: a person approves (or, after a reviewer's denial, allows anyway) exactly this
 * call, so a padded argument's tail must not be out of sight behind a summary's first characters.
 */
function withArgumentsShown(shown: CardPreview, args: Readonly<Record<string, unknown>>): CardPreview {
  if (shown.detail !== undefined && shown.detail.text.length > 0) return shown;
  const text = JSON.stringify(args, null, 2);
  if (JSON.stringify(args).length <= SUMMARY_ARGS_CHARS) return shown;
  return { ...shown, detail: { kind: "code", text } };
}

function grantFor(
  option: AlwaysOption,
  tool: AnyTool,
  args: Record<string, unknown>,
  by: CardPerson | undefined,
): Grant | undefined {
  const giver = by === undefined ? {} : { by };
  switch (option) {
    case "always_tool":
      return { kind: "tool", tool: tool.name, ...giver };
    case "always_command":
      return typeof args.command === "string"
        ? { kind: "command", command: args.command, ...giver }
        : undefined;
    case "always_domain": {
      const domain = domainOf(args);
      return domain ? { kind: "domain", domain, ...giver } : undefined;
    }
    case "readonly_session":
      return { kind: "readonly_session", ...giver };
  }
}

/**
 * What the approval card shows of a call: the tool's own preview, else its name and arguments.
 * A reviewer's denial card shows the call the same way (reviewed-ask.ts).
 */
export async function cardPreview(
  ctx: TurnContext,
  tool: AnyTool,
  args: Record<string, unknown>,
): Promise<CardPreview> {
  return shownOf(tool, args, await ownPreview(ctx, tool, args));
}

/** The tool's own preview of the call, what it threw instead (`failure`), or undefined when it has none. */
async function ownPreview(
  ctx: TurnContext,
  tool: AnyTool,
  args: Record<string, unknown>,
): Promise<ToolPreview | { readonly failure: unknown } | undefined> {
  if (!tool.preview) return undefined;
  try {
    return await tool.preview(args, { request: ctx.request, facts: ctx.deps.facts });
  } catch (failure) {
    return { failure };
  }
}

/** What the card shows of a call given its tool's own preview (see cardPreview). */
function shownOf(
  tool: AnyTool,
  args: Record<string, unknown>,
  own: ToolPreview | { readonly failure: unknown } | undefined,
): CardPreview {
  const made = own === undefined || "failure" in own ? { summary: summarizeCall(tool.name, args) } : own;
  return withArgumentsShown(made, args);
}

/**
 * For a call of a tool that binds its preview, approved on a card that showed `approved`: the
 * tool's preview made again now when it was made from the same content (sameContent: the same
 * fingerprint), else undefined — the call must not run.
 */
export async function previewStillBound(
  ctx: TurnContext,
  tool: AnyTool,
  args: Record<string, unknown>,
  approved: CardPreview,
): Promise<ToolPreview | undefined> {
  if (!tool.preview) return undefined;
  try {
    const now: ToolPreview = await tool.preview(args, { request: ctx.request, facts: ctx.deps.facts });
    return sameContent(now, approved) ? now : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Ask a person; when the call may run, what the card they approved showed (undefined: it may
 * not). Answers the call itself when it may not — unless this is a `hop` of a running call (its
 * own card, under hopCallId), which the tool answers.
 */
export async function requestApproval(
  ctx: TurnContext,
  call: RawToolCall,
  tool: AnyTool,
  args: Record<string, unknown>,
  decision: Decision,
  hop?: string,
): Promise<CardPreview | undefined> {
  const answer = async (status: "denied" | "not_started" | "error", content: string, reason?: string) => {
    if (hop === undefined) await ctx.answer({ callId: call.id, name: tool.name, status, content, reason });
  };
  const notice: PermissionNotice = {
    callId: call.id,
    tool: tool.name,
    args,
    reason: decision.reason,
    category: trustedCategory(tool, args),
    provenance: ctx.provenance,
    alwaysOptions: decision.alwaysOptions,
  };
  const own = await ownPreview(ctx, tool, args);
  if (tool.bindsPreview && own !== undefined && "failure" in own) {
    // An approval could never run it (it runs only while its preview, made again, has the approved
    // card's fingerprint, and a card made without one has none): nobody is asked, and the model is
    // told the preview's own reason (save_skill's refusal of a link, say), not a change after approval.
    const reason = own.failure instanceof Error ? own.failure.message : String(own.failure);
    ctx.audit("decision", call.id, tool.name, { action: "deny", reason, stage: "preview" });
    await answer(
      "error",
      failed(`nobody was asked to approve this call and nothing was done: ${reason}`),
      reason,
    );
    return undefined;
  }
  const outsideReads = ctx.outsideReads();
  // The files of every message the requester sent in this turn, steering included.
  const attachedFiles = ctx.attachedFiles();
  const request: PermissionRequest = {
    ...notice,
    callId: hop === undefined ? call.id : hopCallId(call.id, hop),
    preview: shownOf(tool, args, own),
    ...(decision.humanOnly ? { onlyLooseners: true } : {}),
    ...(outsideReads === undefined ? {} : { outsideReads }),
    ...(attachedFiles === undefined ? {} : { attachedFiles }),
  };
  ctx.emit({ type: "permission-required", ...notice });
  ctx.audit("approval_requested", call.id, tool.name, {
    reason: decision.reason,
    rule: decision.rule,
    alwaysOptions: decision.alwaysOptions,
  });
  const approver = ctx.deps.approver;
  if (!approver) {
    ctx.audit("approval_resolved", call.id, tool.name, { outcome: "unavailable" });
    await answer("denied", TOOL_RESULT.approvalUnavailable, "no approval here");
    return undefined;
  }
  let outcome: ApprovalOutcome;
  let by: CardPerson | undefined;
  let shown = request.preview;
  try {
    const raced = await raceAbort(approver(request, ctx.signal), ctx.signal);
    const verdict = raced.aborted ? "interrupted" : raced.value;
    outcome = typeof verdict === "string" ? verdict : verdict.outcome;
    by = typeof verdict === "string" ? undefined : verdict.by;
    if (typeof verdict !== "string" && verdict.shown) shown = verdict.shown;
  } catch (error) {
    // Nobody decided (the card could not be shown, or the approval failed): the call does not
    // run, and its result says why so the model can act on it; the turn goes on.
    ctx.emit({
      type: "notice",
      level: "warning",
      message: `Approval failed, the call did not run: ${String(error)}`,
    });
    ctx.audit("approval_resolved", call.id, tool.name, { outcome: "error" });
    await answer("error", failed(String(error)));
    return undefined;
  }
  if (!OUTCOMES.has(outcome)) outcome = "deny";
  ctx.audit("approval_resolved", call.id, tool.name, {
    outcome,
    ...(by === undefined ? {} : { decidedBy: `${by.platform}:${by.id}`, decidedByName: by.name }),
  });
  if (outcome === "interrupted") {
    ctx.interrupt();
    await answer("not_started", TOOL_RESULT.notStartedWhileWaiting);
    return undefined;
  }
  if (outcome === "deny") {
    await answer("denied", TOOL_RESULT.deniedByUser, "denied by you");
    return undefined;
  }
  if (outcome !== "once" && decision.alwaysOptions.includes(outcome)) {
    const grant = grantFor(outcome, tool, args, by);
    if (grant) ctx.deps.grants.add(grant);
  }
  return shown;
}
