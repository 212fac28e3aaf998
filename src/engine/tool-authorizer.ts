/**
 * The authorisation phase for one tool call: allowed-tools check, argument validation (the tool's
 * schema and a nesting limit), the permission decision and, when it says "ask", the reviewer's
 * screen and then the approval round trip (asking/approval-request.ts). A resumed turn's call a
 * person was already asked about is decided by that card alone (askedBefore). Every call of a step
 * is decided in the mode the step began in (StepScope; resumed, the stricter of it and the session's now). Calls that cannot run are answered here
 * with their own wording; interactive tools (ask_user, propose_plan, update_plan) are handled in
 * place once allowed.
 */
import { type AnyTool, compactArgs, labelText, type ToolPreview } from "../core/tool.js";
import { redactDeep } from "../logging/redact.js";
import { INTERACTIVE_TOOL_NAMES } from "../tools/interactive-tools.js";
import { parseToolArguments } from "../tools/registry.js";
import { previewStillBound, requestApproval, summarizeCall } from "./asking/approval-request.js";
import type { CardPreview } from "./asking/ports.js";
import { runInteractiveCall } from "./asking/interactive-calls.js";
import type { Decision } from "./permissions/permission-engine.js";
import type { FinishReason } from "../core/messages.js";
import type { PermissionMode } from "../core/modes.js";
import type { RawToolCall } from "./provider/provider.js";
import { allowsTool } from "../core/request.js";
import { screenAsk } from "./reviewer/reviewed-ask.js";
import { deniedByPolicy, notEnabled, preview, UNKNOWN_TOOL_REASON } from "./tool-results.js";
import type { TurnContext } from "./turn-context.js";

/**
 * How deep a call's arguments may nest. Tools with open schemas (MCP) accept any JSON object, and
 * what handles arguments later (freezing events, card previews, call hashes) walks them
 * recursively: far deeper nesting would overflow the stack and fail the turn.
 */
const MAX_ARGUMENT_DEPTH = 64;

/** Characters of a call's arguments (and of its rewritten arguments) an audit record keeps. */
const AUDIT_ARGUMENTS_CHARS = 1_000;

/**
 * What a call's audit record keeps of its arguments: secrets redacted first (secret-named fields by
 * the redactor's key rule, token-shaped strings anywhere), while the arguments are still whole,
 * then cut to a preview. Arguments that are no JSON object (mangled, or cut short by the model)
 * never run, and their text cannot be read field by field: only their length is kept; nor is more
 * kept of arguments nested too deep to serialise (they are refused as invalid below).
 */
function auditedArguments(raw: string): string {
  const parsed = parseToolArguments(raw);
  if (parsed.kind === "mangled") return `[unparsed arguments: ${raw.length} characters]`;
  if (nestedDeeperThan(parsed.value, MAX_ARGUMENT_DEPTH))
    return `[arguments nested deeper than ${MAX_ARGUMENT_DEPTH} levels: ${raw.length} characters]`;
  return redactedPreview(parsed.value);
}

/** `value` as compact JSON with its secrets redacted, cut to the audit's preview length. */
function redactedPreview(value: Record<string, unknown>): string {
  return preview(JSON.stringify(redactDeep(value)), AUDIT_ARGUMENTS_CHARS);
}

/** A call that passed authorisation and waits for the execution phase. */
export interface ClearedCall {
  readonly call: RawToolCall;
  readonly tool: AnyTool;
  readonly args: Record<string, unknown>;
  /** What the call does, for status lines (see `callLabel`). */
  readonly label: string;
  /** What let it run when it would have asked a person (the reviewer's allow), for its status line. */
  readonly clearedBy?: string;
  /** A person approved this very call on its card (see ToolContext.approvedByPerson). */
  readonly approvedByPerson?: true;
  /**
   * For a tool that binds its preview (ToolDefinition.bindsPreview), approved on its card: its
   * preview made again now when it was made from the content the person approved (the same
   * fingerprint), else undefined.
   */
  readonly stillAsApproved?: () => Promise<ToolPreview | undefined>;
}

/**
 * The status-line label of a call: the tool's own `label` (one line, capped), else — or when it
 * throws or comes back blank — a compact `key=value` rendering of the scalar arguments.
 */
export function callLabel(tool: AnyTool, args: Readonly<Record<string, unknown>>): string {
  if (tool.label) {
    try {
      const own = labelText(String(tool.label(args)));
      if (own !== "") return own;
    } catch {
      // A label is decoration: fall back to the arguments.
    }
  }
  return compactArgs(args);
}

/** What every call of one step is decided in, fixed when the step's authorisation begins. */
export interface StepScope {
  /**
   * The mode the step's calls were proposed in. A plan one of them proposes (propose_plan) and a
   * person approves switches the mode for the steps after it: a call made beside the proposal is
   * still decided as a call of the mode it was made in, never of the mode the plan went into. On
   * a resumed turn: the stricter of that mode (stored with the step) and the session's mode now.
   */
  readonly mode: PermissionMode;
  /** The calls are a resumed turn's waiting calls: a person may have been asked about them already (askedBefore). */
  readonly resumed: boolean;
}

/** What a step's calls before this one (and beside it) will have done when it runs, foreseen from their arguments. */
export interface StepBefore {
  /**
   * The downloaded files to decide it against: the session's, and what the step's calls that may
   * run before it or beside it would download (step-downloads.ts).
   */
  readonly downloaded: ReadonlySet<string>;
  /** The files the step's calls before it write, nearest first (step-writes.ts): the reviewer is told. */
  readonly written: readonly string[];
}

/**
 * Authorise one call. Returns the cleared call, or undefined when the call was answered here
 * (invalid, denied, not approved, or an interactive tool that already ran). `step`: what every
 * call of its step is decided in; `before`: what the step's calls before it will have done.
 */
export async function authorizeCall(
  ctx: TurnContext,
  call: RawToolCall,
  finishReason: FinishReason | undefined,
  step: StepScope,
  before: StepBefore,
): Promise<ClearedCall | undefined> {
  const { registry } = ctx.deps;
  ctx.audit("proposal", call.id, call.name, { arguments: auditedArguments(call.arguments) });
  if (registry.get(call.name) && !allowsTool(ctx.request, call.name)) {
    await ctx.answer({
      callId: call.id,
      name: call.name,
      status: "denied",
      content: notEnabled(call.name),
      reason: "not enabled",
    });
    return undefined;
  }
  const validated = registry.validate(call.name, call.arguments, ctx.request, finishReason);
  if (!validated.ok) {
    ctx.audit("decision", call.id, call.name, { action: "invalid", reason: validated.error });
    await ctx.answer({
      callId: call.id,
      name: call.name,
      status: "error",
      content: validated.error,
      reason: registry.get(call.name) ? "invalid arguments" : UNKNOWN_TOOL_REASON,
    });
    return undefined;
  }
  const { tool, args } = validated;
  if (nestedDeeperThan(args, MAX_ARGUMENT_DEPTH)) {
    const error = `Invalid arguments for ${tool.name} — (arguments): nested deeper than ${MAX_ARGUMENT_DEPTH} levels. Re-issue the call with the declared parameters.`;
    ctx.audit("decision", call.id, call.name, { action: "invalid", reason: error });
    await ctx.answer({
      callId: call.id,
      name: tool.name,
      status: "error",
      content: error,
      reason: "invalid arguments",
    });
    return undefined;
  }
  const decision = decideAndAudit(ctx, call, tool, args, before.downloaded, step.mode);
  if (decision.action === "deny") {
    await ctx.answer({
      callId: call.id,
      name: tool.name,
      status: "denied",
      content: deniedByPolicy(decision.reason),
      reason: "denied by policy",
    });
    return undefined;
  }
  let clearedBy: string | undefined;
  let approved: CardPreview | undefined;
  if (step.resumed && (await askedBefore(ctx, call))) {
    approved = await requestApproval(ctx, call, tool, args, decision);
    if (!approved) return undefined;
  } else if (decision.action === "ask") {
    const summary = summarizeCall(tool.name, args);
    const screened = await screenAsk(ctx, call, tool, args, decision, summary, step.mode, before.written);
    if (screened.kind === "answered") return undefined;
    if (screened.kind === "run") clearedBy = screened.note;
    else {
      approved = await requestApproval(ctx, call, tool, args, decision);
      if (!approved) return undefined;
    }
  }
  if (INTERACTIVE_TOOL_NAMES.has(tool.name)) {
    await runInteractiveCall(ctx, call, tool.name, args);
    return undefined;
  }
  return {
    call,
    tool,
    args: { ...args, ...decision.runArgs },
    label: callLabel(tool, args),
    ...(clearedBy ? { clearedBy } : {}),
    ...(approved ? { approvedByPerson: true } : {}),
    ...(approved && tool.bindsPreview
      ? { stillAsApproved: () => previewStillBound(ctx, tool, args, approved) }
      : {}),
  };
}

/**
 * Whether a person was asked about this very call already (its turn parked at the card, then
 * resumed: after a restart, in another process, after a press, an expiry or a stop). Their card
 * decides it then — approved, denied, expired, cancelled, or still open and waited on — whatever
 * the reviewer would say now, a grant or a mode given since. A lookup that fails counts as asked:
 * the card path decides, and fails closed.
 */
async function askedBefore(ctx: TurnContext, call: RawToolCall): Promise<boolean> {
  const asked = ctx.deps.approver?.asked;
  if (!asked) return false;
  try {
    return await asked(call.id);
  } catch {
    return true;
  }
}

/** Whether `value` nests objects or arrays more than `max` levels deep (walked without recursion). */
function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<readonly [unknown, number]> = [[value, 0]];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [node, depth] = next;
    if (node === null || typeof node !== "object") continue;
    if (depth >= max) return true;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * Put a changed target of a running call (a redirect hop) to the permission engine again, in the
 * `mode` its step was decided in: allow goes on, deny stops, ask raises a card of its own. True
 * when the call may go on.
 */
export async function reauthorizeCall(
  ctx: TurnContext,
  call: RawToolCall,
  tool: AnyTool,
  args: Record<string, unknown>,
  hop: string,
  mode: PermissionMode,
): Promise<boolean> {
  const downloaded = ctx.deps.facts.downloadedFiles;
  const decision = decideAndAudit(ctx, call, tool, args, downloaded, mode, { hop });
  if (decision.action === "ask")
    return (await requestApproval(ctx, call, tool, args, decision, hop)) !== undefined;
  return decision.action === "allow";
}

/**
 * The permission engine's decision in `mode`, or a denial when a check throws on arguments it
 * cannot read (a model-written command is as odd as the model likes): a check that fails must not
 * run the call, nor end the whole turn.
 */
function decideFailingClosed(
  ctx: TurnContext,
  tool: AnyTool,
  args: Record<string, unknown>,
  downloaded: ReadonlySet<string>,
  mode: PermissionMode,
): Decision {
  const { permissions, grants } = ctx.deps;
  try {
    return permissions.decide(tool, args, {
      mode,
      grants,
      facts: { downloadedFiles: downloaded },
      provenance: ctx.provenance,
      request: ctx.request,
    });
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return {
      action: "deny",
      rule: "check_failed",
      reason: `the permission check could not read this call (${preview(detail, 200)}); write it more simply`,
      alwaysOptions: [],
    };
  }
}

/** The permission engine's decision on a call in this turn, in `mode`, written to the audit log. */
function decideAndAudit(
  ctx: TurnContext,
  call: RawToolCall,
  tool: AnyTool,
  args: Record<string, unknown>,
  downloaded: ReadonlySet<string>,
  mode: PermissionMode,
  extra: Record<string, unknown> = {},
): Decision {
  const decision = decideFailingClosed(ctx, tool, args, downloaded, mode);
  ctx.audit("decision", call.id, tool.name, {
    action: decision.action,
    rule: decision.rule,
    reason: decision.reason,
    ...(decision.runArgs ? { runs: redactedPreview(decision.runArgs) } : {}),
    ...extra,
  });
  return decision;
}
