/**
 * The tool calls of one assistant step, in two phases.
 *
 * 1. Authorise every call first, strictly in call order (approvals reach the person one at a
 *    time), so nothing runs before every call of the step has a decision. Each call is decided
 *    against the session's downloaded files plus those the step's calls that may run before it
 *    or beside it would download (step-downloads.ts), so `curl -o x.sh …` and `sh x.sh` in one
 *    step ask as they would in two (and the reviewer is told which files the calls before it
 *    write: step-writes.ts); and every call in the mode the step began in (StepScope), so
 *    a plan approved by one of them changes nothing for the calls beside it. That mode is stored
 *    with the step's assistant message (meta.stepMode): a resumed turn decides the calls still
 *    waiting in the stricter of it and the session's mode now (a tightening `/mode` since
 *    applies; a plan approved beside them loosens nothing).
 * 2. Execute the cleared calls in call order: a run of consecutive low-risk, concurrent-safe calls
 *    executes together, at most MAX_CONCURRENT_CALLS at a time (a longer run is split into
 *    batches in call order); every other call runs alone, after everything before it finished. An
 *    approved call whose card showed workspace content (ToolDefinition.bindsPreview) runs only if
 *    that content is still what the person approved (its preview, made again, has the approved
 *    card's fingerprint): an earlier call may have changed it. The tool is handed that preview.
 *    Just before it runs, a call no person approved is checked against the downloaded files as
 *    recorded by then: one that would run a file an earlier call downloaded, unforeseen in phase
 *    1 (web_fetch's save_to, a symlink's real name), or that any command would once the record
 *    filled (download-execution.ts), is not run, the rule's reason is told, and the model may
 *    propose it again.
 *
 * A step takes at most MAX_TOOL_CALLS_PER_STEP calls. The turn loop drops the ones after that
 * before the assistant message is stored (capStepCalls), so they never reach the history: the
 * person gets one notice, and the model one note on its first kept call's result
 * (noteDroppedCalls). A history stored before that (a resumed turn) may still hold more: the calls
 * past the limit are answered as not run (tooManyCalls), never authorised or executed.
 *
 * An interrupt answers every call that has no result yet — not started, or interrupted while
 * running — so the history never holds an orphaned tool call. Results are stored in call order.
 */
import type { AnyTool, ToolContext } from "../core/tool.js";
import { raceAbort } from "../core/abort.js";
import { isImage } from "../core/attachment.js";
import type { ConversationMessage, FinishReason } from "../core/messages.js";
import { loosensMode, type PermissionMode } from "../core/modes.js";
import { downloadRunOf, commandOf } from "./permissions/permission-engine.js";
import { type StepCall, stepDownloadedFiles } from "./permissions/step-downloads.js";
import type { RawToolCall } from "./provider/provider.js";
import { authorizeCall, type ClearedCall, reauthorizeCall, type StepScope } from "./tool-authorizer.js";
import { stepWrittenFiles, writtenPathOf } from "./reviewer/step-writes.js";
import { droppedCallsNote, failed, TOOL_RESULT, tooManyCalls } from "./tool-results.js";
import type { CallAnswer, TurnContext } from "./turn-context.js";

/**
 * The most tool calls one step runs. Only the reply size bounds how many calls a model can send
 * (tens of thousands of tiny ones fit), and each one is authorised, may ask a person, runs and
 * adds a result to every later request. Real steps use a handful; 64 leaves room for a wide
 * fan-out of reads while a broken or prompt-injected model cannot make a step unbounded.
 */
export const MAX_TOOL_CALLS_PER_STEP = 64;

/**
 * A model step's calls as the history keeps them: the first MAX_TOOL_CALLS_PER_STEP, and how many
 * were dropped after them. The dropped ones are never stored, so no later request carries them.
 */
export function capStepCalls(calls: readonly RawToolCall[]): {
  readonly kept: readonly RawToolCall[];
  readonly dropped: number;
} {
  if (calls.length <= MAX_TOOL_CALLS_PER_STEP) return { kept: calls, dropped: 0 };
  return { kept: calls.slice(0, MAX_TOOL_CALLS_PER_STEP), dropped: calls.length - MAX_TOOL_CALLS_PER_STEP };
}

/** The person's one notice for a step whose calls past the limit were dropped. */
export function droppedCallsNotice(dropped: number): string {
  return `The agent asked for ${MAX_TOOL_CALLS_PER_STEP + dropped} tool calls in one step; only the first ${MAX_TOOL_CALLS_PER_STEP} were considered, the other ${dropped} were not run.`;
}

/**
 * When the trailing assistant message of the history had calls dropped (meta.droppedToolCalls)
 * and its first call has no result yet, have that result tell the model so, once. Read from the
 * history, so a turn resumed after a restart still tells it.
 */
export function noteDroppedCalls(ctx: TurnContext): void {
  const answered = new Set<string>();
  let step: Extract<ConversationMessage, { role: "assistant" }> | undefined;
  for (let i = ctx.history.length - 1; i >= 0 && !step; i--) {
    const message = ctx.history[i]!;
    if (message.role === "tool") answered.add(message.tool_call_id);
    else if (message.role === "assistant") step = message;
    else return;
  }
  const dropped = step?.meta?.droppedToolCalls;
  const first = step?.tool_calls?.[0];
  if (typeof dropped !== "number" || dropped <= 0 || !first || answered.has(first.id)) return;
  ctx.noteOnResult(first.id, droppedCallsNote(MAX_TOOL_CALLS_PER_STEP, dropped));
}

/**
 * The most concurrent-safe calls that run at once. Such calls may still cost a process each
 * (search_files starts one `rg` per call), so a long run of them goes in batches of this width.
 */
export const MAX_CONCURRENT_CALLS = 8;

/** Whether a tool's calls may run alongside their neighbours. */
export function isConcurrentSafe(tool: AnyTool): boolean {
  return tool.concurrent && tool.risk === "low";
}

/**
 * Group cleared calls into execution batches, preserving call order: consecutive concurrent-safe
 * calls share a batch of at most MAX_CONCURRENT_CALLS; every other call is a batch of its own.
 */
export function executionBatches(cleared: readonly ClearedCall[]): ClearedCall[][] {
  const batches: ClearedCall[][] = [];
  for (const call of cleared) {
    const last = batches.at(-1);
    const lastCall = last?.[0];
    if (
      last &&
      lastCall &&
      last.length < MAX_CONCURRENT_CALLS &&
      isConcurrentSafe(lastCall.tool) &&
      isConcurrentSafe(call.tool)
    )
      last.push(call);
    else batches.push([call]);
  }
  return batches;
}

function notStarted(cleared: ClearedCall): CallAnswer {
  return {
    callId: cleared.call.id,
    name: cleared.tool.name,
    status: "not_started",
    content: TOOL_RESULT.notStarted,
  };
}

/**
 * An approved call whose preview no longer shows what the person approved (its file changed
 * while the card waited, or an earlier call of the step changed it): not run, and both the person
 * and the model are told.
 */
function changedSinceApproval(ctx: TurnContext, cleared: ClearedCall): CallAnswer {
  ctx.emit({
    type: "notice",
    level: "warning",
    message: `${cleared.tool.name} was not run: what it would do changed after it was approved. The agent may propose it again.`,
  });
  return {
    callId: cleared.call.id,
    name: cleared.tool.name,
    status: "not_started",
    content: TOOL_RESULT.changedSinceApproval,
    reason: "changed after approval",
  };
}

/**
 * A call no person approved that the download rule (download-execution.ts) stops just before it
 * runs — it would run a file recorded as downloaded since it was decided, or the record filled
 * meanwhile: not run, and the audit, the person and the model are told `why`, the rule's reason.
 */
function runsStepDownload(ctx: TurnContext, cleared: ClearedCall, why: string): CallAnswer {
  const { call, tool } = cleared;
  ctx.audit("decision", call.id, tool.name, {
    action: "deny",
    rule: "download_execute",
    reason: `${why}; running downloaded code always needs approval`,
    stage: "before_run",
  });
  ctx.emit({
    type: "notice",
    level: "warning",
    message: `${tool.name} was not run, as it needs a person's approval: ${why}. The agent may propose it again.`,
  });
  return {
    callId: call.id,
    name: tool.name,
    status: "not_started",
    content: `Not run: a check just before it would run found that ${why}; running downloaded code needs a person's approval. Nothing was executed. Propose it again on its own if it is still wanted, so the user is asked.`,
    reason: why,
  };
}

async function execute(ctx: TurnContext, cleared: ClearedCall, step: StepScope): Promise<CallAnswer> {
  const { call, tool, args } = cleared;
  if (ctx.aborted) return notStarted(cleared);
  const runsDownload = cleared.approvedByPerson
    ? undefined
    : downloadRunOf(tool, args, ctx.deps.facts.downloadedFiles);
  if (runsDownload !== undefined) return runsStepDownload(ctx, cleared, runsDownload);
  const checkedPreview = cleared.stillAsApproved ? await cleared.stillAsApproved() : undefined;
  if (cleared.stillAsApproved && !checkedPreview) return changedSinceApproval(ctx, cleared);
  await ctx.deps.persistence?.markToolStarted(call.id);
  if (ctx.aborted) return notStarted(cleared);
  ctx.emit({
    type: "tool-call-started",
    callId: call.id,
    name: tool.name,
    args,
    preview: cleared.label,
    ...(cleared.clearedBy ? { clearedBy: cleared.clearedBy } : {}),
  });
  const startedAt = performance.now();
  let live = true;
  const toolContext: ToolContext = {
    request: ctx.request,
    callId: call.id,
    signal: ctx.signal,
    facts: ctx.deps.facts,
    approvedByPerson: cleared.approvedByPerson === true,
    ...(checkedPreview ? { checkedPreview } : {}),
    emitOutput: (line) => {
      if (live) ctx.emit({ type: "tool-output-delta", callId: call.id, name: tool.name, delta: line });
    },
    reauthorize: (changed, hop) => reauthorizeCall(ctx, call, tool, { ...args, ...changed }, hop, step.mode),
  };
  let answer: Omit<CallAnswer, "callId" | "name" | "durationMs">;
  try {
    const raced = await raceAbort(
      Promise.resolve().then(() => tool.execute(args, toolContext)),
      ctx.signal,
    );
    if (raced.aborted) answer = { status: "interrupted", content: TOOL_RESULT.interruptedWhileRunning };
    else {
      const output = String(raced.value.output ?? "");
      const { files, summary: reason } = raced.value;
      // Images only, whatever a tool (an MCP adapter, a module's) passes on: see ToolResult.attachments.
      const images = raced.value.attachments?.filter(isImage);
      answer = raced.value.ok
        ? { status: "ok", content: output, files, reason, images }
        : { status: "error", content: failed(output), files, reason };
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    answer = ctx.aborted
      ? { status: "interrupted", content: TOOL_RESULT.interruptedWhileRunning }
      : { status: "error", content: failed(message), reason: message };
  }
  live = false;
  const finished: CallAnswer = {
    ...answer,
    callId: call.id,
    name: tool.name,
    durationMs: Math.round(performance.now() - startedAt),
  };
  ctx.emitFinished(finished);
  return finished;
}

/**
 * Answer the calls past MAX_TOOL_CALLS_PER_STEP as not run, stored in call order after the others:
 * only a history stored before the turn loop dropped them (capStepCalls) can hold them. One
 * notice tells the person; no status line per call (there may be thousands).
 */
async function answerExcess(ctx: TurnContext, excess: readonly RawToolCall[]): Promise<void> {
  if (excess.length === 0) return;
  ctx.emit({ type: "notice", level: "warning", message: droppedCallsNotice(excess.length) });
  const content = tooManyCalls(MAX_TOOL_CALLS_PER_STEP);
  for (const call of excess)
    await ctx.storeResult({ callId: call.id, name: call.name, status: "not_started", content });
}

/**
 * What foreseeing the step needs of a call, from its arguments: what its downloads need
 * (step-downloads.ts) and the file it writes (step-writes.ts).
 */
function foreseenOf(
  ctx: TurnContext,
  call: RawToolCall,
): { readonly run: StepCall; readonly writes?: string } {
  const validated = ctx.deps.registry.validate(call.name, call.arguments, ctx.request);
  if (!validated.ok) return { run: { command: undefined, concurrent: false } };
  const { tool, args } = validated;
  const writes = writtenPathOf(tool, args);
  return {
    run: { command: commandOf(tool, args), concurrent: isConcurrentSafe(tool) },
    ...(writes === undefined ? {} : { writes }),
  };
}

/**
 * The mode a resumed turn decides its waiting calls in: the stricter of the mode their step was
 * proposed in (the trailing assistant message's meta.stepMode) and the session's mode now. A
 * history stored before steps recorded their mode is decided in the session's mode.
 */
function resumedStepMode(ctx: TurnContext): PermissionMode {
  for (let i = ctx.history.length - 1; i >= 0; i--) {
    const message = ctx.history[i]!;
    if (message.role === "tool") continue;
    const saved = message.role === "assistant" ? message.meta?.stepMode : undefined;
    return saved !== undefined && loosensMode(saved, ctx.mode) ? saved : ctx.mode;
  }
  return ctx.mode;
}

/**
 * Authorise, then execute, every tool call of one step (see the module header). `resumed`: the
 * calls are a resumed turn's waiting calls (a person may have decided them on a card already),
 * decided in resumedStepMode.
 */
export async function runToolCalls(
  ctx: TurnContext,
  all: readonly RawToolCall[],
  finishReason: FinishReason | undefined,
  resumed = false,
): Promise<void> {
  const calls = all.slice(0, MAX_TOOL_CALLS_PER_STEP);
  const step: StepScope = { mode: resumed ? resumedStepMode(ctx) : ctx.mode, resumed };
  const foreseen = calls.map((call) => foreseenOf(ctx, call));
  const downloadedFor = stepDownloadedFiles(
    foreseen.map((f) => f.run),
    ctx.deps.facts.downloadedFiles,
  );
  const writtenFor = stepWrittenFiles(foreseen.map((f) => f.writes));
  const cleared: ClearedCall[] = [];
  for (const [index, call] of calls.entries()) {
    if (ctx.aborted)
      await ctx.answer({
        callId: call.id,
        name: call.name,
        status: "not_started",
        content: TOOL_RESULT.notStarted,
      });
    else {
      const before = { downloaded: downloadedFor(index), written: writtenFor(index) };
      const ready = await authorizeCall(ctx, call, finishReason, step, before);
      if (ready) cleared.push(ready);
    }
  }
  for (const batch of executionBatches(cleared)) {
    if (ctx.aborted) {
      for (const call of batch) await ctx.answer(notStarted(call));
      continue;
    }
    const answers = await Promise.all(batch.map((call) => execute(ctx, call, step)));
    for (const answer of answers) {
      if (answer.status === "not_started") ctx.emitFinished(answer);
      await ctx.storeResult(answer);
    }
  }
  await answerExcess(ctx, all.slice(MAX_TOOL_CALLS_PER_STEP));
}
