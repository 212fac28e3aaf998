/**
 * TurnEngine: the agent loop of one conversation.
 *
 * A user turn is model ↔ tool iterations until the model stops calling tools, the step budget is
 * spent, a provider error ends it, or the user stops it. The engine talks to its caller only
 * through frozen AgentEvents; it keeps no platform code. One engine lives as long as a session
 * (grants, facts, compaction state — kept beyond it through a CompactionStatePort when given —
 * queued steering) while each run receives the history in its request snapshot. The system
 * prompt — the session's `instructions` (built on its first turn when they are given as a
 * builder, then kept), then the part that belongs to the turn's requester
 * (their memories), settled when the turn starts (SystemPrompt) — is sent first on every call and
 * is not part of the stored history.
 *
 * Guarantees: every tool call the model made gets a tool result (no orphans, whatever happens);
 * a message is persisted before anything depends on it — a tool runs, a person is asked, the turn
 * ends (the opening user message goes out with the model's reply, in one write); a stopped stream
 * keeps its partial text;
 * provider failures leave an error marker so `retry()` can re-run without a new user message.
 */
import type { PlatformUser } from "../core/thread-target.js";
import { Compactor } from "./compaction.js";
import type { CompactionStatePort } from "./compaction-state.js";
import { EventChannel } from "./event-channel.js";
import { type AgentEvent, agentEvent } from "../core/events.js";
import { startedByAgentNote } from "../core/agent-note.js";
import type { Approver, Asker, PlanApprover } from "./asking/ports.js";
import type { AuditSink } from "./audit-record.js";
import type { MessageMeta } from "../core/messages.js";
import { cutOffNotice, runModelStep } from "./model-step.js";
import type { PermissionMode } from "../core/modes.js";
import { isErrorMarker, OutboundMemo } from "./outbound.js";
import type { MediaOptions } from "./outbound-media.js";
import type { Attachment } from "../core/attachment.js";
import type { GrantSet } from "./permissions/grants.js";
import type { PermissionEngine } from "./permissions/permission-engine.js";
import type { ProviderClient, RawToolCall } from "./provider/provider.js";
import type { ReviewerDenialReporter, ReviewerGate } from "./reviewer/reviewer-gate.js";
import { type ConversationExecutionRequest, effectiveMaxSteps } from "../core/request.js";
import { TOOL_RESULT } from "./tool-results.js";
import { capStepCalls, droppedCallsNotice, noteDroppedCalls, runToolCalls } from "./tool-scheduler.js";
import {
  type InstructionsBuilder,
  type RequesterInstructions,
  SystemPrompt,
  type TurnPrompt,
} from "./system-prompt.js";
import { TurnContext, type TurnPersistence } from "./turn-context.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { SessionFacts } from "../core/tool.js";
import type { SessionTurnEngine } from "./session-turn-engine.js";
import { type BegunTurn, type TurnEvents, turnEvents } from "./turn-events.js";
import { callIdsOf, normaliseCalls, toRecord, unansweredToolCalls } from "./history-calls.js";

export type { TurnPersistence } from "./turn-context.js";

export interface TurnEngineOptions {
  provider: ProviderClient;
  registry: ToolRegistry;
  permissions: PermissionEngine;
  /**
   * The system prompt's fixed part, the same for every turn of the session: its text, or a builder
   * asked when the session's first turn starts (its text kept for the later turns, its notice
   * shown on that turn; a build that fails fails that turn, and the next turn asks again).
   */
  instructions: string | InstructionsBuilder;
  /**
   * The end of the system prompt that belongs to a turn's requester (what is remembered about
   * them), after `instructions` so the part every turn shares comes first; asked once at the
   * start of each turn, its notice (a failed read) shown then. None: `instructions` alone.
   */
  requesterInstructions?: RequesterInstructions;
  grants: GrantSet;
  facts: SessionFacts;
  approver?: Approver;
  asker?: Asker;
  planApprover?: PlanApprover;
  audit?: AuditSink;
  /** Ephemeral block appended to the last user message at send time, never persisted. */
  contextProvider?: (request: ConversationExecutionRequest) => Promise<string | undefined>;
  persistence?: TurnPersistence;
  /** Called when a plan approval switches the mode, with its approver when a person approved it. */
  onModeChange?: (mode: PermissionMode, by?: PlatformUser) => void;
  now?: () => Date;
  compaction?: { keepRecentTurns?: number };
  /** Where the session's compaction state outlives this engine (compaction-state.ts); none: in memory only. */
  compactionState?: CompactionStatePort;
  /**
   * How many of the session's messages come before the history its requests carry (they were
   * not read: store/history-window.ts); the compaction state counts them. 0 when none.
   */
  historyStart?: number;
  /** The session's safety reviewer (reviewed mode and shadow verdicts). */
  reviewer?: ReviewerGate;
  /** Shows a reviewer denial to the person, with "Allow anyway". */
  reviewerDenials?: ReviewerDenialReporter;
  /**
   * Rewrites a new turn's prompt before it is stored and sent (e.g. a skill run directly: the
   * content frames the skill, `meta` keeps what the person typed). Not consulted for turns started
   * by channel content or by the agent's own note (agent-note.ts: that message is marked
   * `meta.agentNote` instead); a framer that fails leaves the prompt as typed, with a warning notice.
   */
  framePrompt?: (request: ConversationExecutionRequest) => Promise<FramedPrompt | undefined>;
  /** How attached images reach the model (vision decision, caps); placeholders only when absent. */
  media?: MediaOptions;
}

/** A prompt as a framer rewrote it: the model-facing content and display-only fields. */
export interface FramedPrompt {
  readonly content: string;
  readonly meta?: MessageMeta;
}

type TurnKind = "run" | "resume" | "retry";

/** The owned agent loop (see the module header). */
export class TurnEngine implements SessionTurnEngine {
  private readonly deps: TurnContext["deps"];
  private readonly compactor: Compactor;
  private readonly outboundMemo = new OutboundMemo();
  private readonly framePrompt: TurnEngineOptions["framePrompt"];
  private readonly systemPrompt: SystemPrompt;
  private readonly steering: { text: string; attachments: readonly Attachment[] }[] = [];
  private current: TurnContext | undefined;

  constructor(options: TurnEngineOptions) {
    this.deps = { ...options, now: options.now ?? (() => new Date()) };
    this.compactor = new Compactor(
      options.compaction?.keepRecentTurns,
      options.compactionState,
      options.historyStart,
    );
    this.framePrompt = options.framePrompt;
    this.systemPrompt = new SystemPrompt(options.instructions, options.requesterInstructions);
  }

  /**
   * A user turn: `request.messages` is the history before it; `request.prompt` joins the history
   * first and is persisted with the model's reply (a crash before then re-runs the turn).
   */
  run(request: ConversationExecutionRequest): TurnEvents {
    return this.drive(request, "run");
  }

  /**
   * Continue a turn persisted while waiting at an approval or question: answers the trailing
   * assistant message's unanswered calls (never re-running one that has a result; a call
   * journaled as started is answered "interrupted while running"), then continues the loop.
   */
  resume(request: ConversationExecutionRequest): TurnEvents {
    return this.drive(request, "resume");
  }

  /** Re-run after a provider error without a new user message; refuses unless history ends in an error. */
  retry(request: ConversationExecutionRequest): TurnEvents {
    return this.drive(request, "retry");
  }

  /** Stop the running turn from any state; aborts the in-flight model request at once. */
  interrupt(): void {
    this.current?.interrupt();
  }

  /** Queue user text (and its attachments); it joins the history at the next step boundary (or the next turn's first). */
  steer(text: string, attachments: readonly Attachment[] = []): void {
    this.steering.push({ text, attachments });
  }

  /** Whether a run / resume / retry is in progress. */
  get isRunning(): boolean {
    return this.current !== undefined;
  }

  private drive(request: ConversationExecutionRequest, kind: TurnKind): TurnEvents {
    return turnEvents(() => this.begin(request, kind));
  }

  /**
   * Start a turn (or refuse it while another runs). Its events end once it has wound down — the
   * engine free — and stopping it early interrupts it first.
   */
  private begin(request: ConversationExecutionRequest, kind: TurnKind): BegunTurn {
    if (this.current) {
      const refused = new EventChannel<AgentEvent>();
      refused.push(refusal("A turn is already running in this conversation.", true));
      refused.close();
      return { events: refused[Symbol.asyncIterator](), stop: async () => undefined };
    }
    const channel = new EventChannel<AgentEvent>();
    const ctx = new TurnContext(this.deps, request, (event) => channel.push(event));
    this.current = ctx;
    // The engine is free before the events end: whoever hears the end may start the next turn.
    const done = this.execute(ctx, kind, () => {
      this.current = undefined;
      channel.close();
    });
    return {
      events: channel[Symbol.asyncIterator](),
      stop: () => {
        if (this.current === ctx) ctx.interrupt(); // the caller stopped listening: stop the turn too
        return done;
      },
    };
  }

  /** Run the turn to its end, then call `ended` (its events are over), however it ended. */
  private async execute(ctx: TurnContext, kind: TurnKind, ended: () => void): Promise<void> {
    try {
      if (kind === "retry") {
        const last = ctx.history.at(-1);
        if (!last || !isErrorMarker(last)) {
          ctx.emit(refusal("Nothing to retry: the conversation does not end in an error.", false));
          return;
        }
      } else if (kind === "resume") {
        const pending = unansweredToolCalls(ctx.history);
        if (pending.length === 0 && ctx.history.at(-1)?.role !== "tool") {
          ctx.emit(refusal("Nothing to resume: no tool call is waiting for an answer.", false));
          return;
        }
        if (pending.length > 0) await this.answerPending(ctx, pending, true);
      } else {
        const pending = unansweredToolCalls(ctx.history);
        if (pending.length > 0) await this.answerPending(ctx, pending, false);
        const untrusted = ctx.provenance.kind === "channel_content";
        const ownNote = startedByAgentNote(ctx.request);
        const framer = untrusted || ownNote ? undefined : this.framePrompt;
        const framed = framer ? await this.framed(ctx, framer) : undefined;
        const { attachments } = ctx.request;
        ctx.hold({
          role: "user",
          content: framed?.content ?? ctx.request.prompt,
          ...(attachments.length > 0 ? { attachments } : {}),
          meta: {
            ...framed?.meta,
            at: ctx.stamp(),
            ...(untrusted ? { untrusted: true } : {}),
            ...(ownNote ? { agentNote: true } : {}),
            ...(untrusted || ownNote ? {} : { by: ctx.request.requester.userId }),
          },
        });
      }
      const prompt = this.systemPrompt.forTurn(ctx.request);
      this.settleSystemPrompt(ctx, prompt instanceof Promise ? await prompt : prompt);
      await this.compactor.restore(ctx.request.messages);
      await this.loop(ctx);
      await ctx.flush();
    } catch (error) {
      const message = `The turn failed unexpectedly: ${error instanceof Error ? error.message : String(error)}`;
      ctx.emit({ type: "error", message, recoverable: true });
      ctx.complete("error");
    } finally {
      ended();
    }
  }

  /**
   * Answer the calls (one or more) a persisted turn left open. Journaled-as-started calls may have
   * partly run and are never re-run; on resume the rest go through the normal authorise/execute
   * path, on a new run they are answered as not started.
   */
  private async answerPending(
    ctx: TurnContext,
    pending: readonly RawToolCall[],
    rerun: boolean,
  ): Promise<void> {
    noteDroppedCalls(ctx);
    const started = (await this.deps.persistence?.startedToolCalls()) ?? new Set<string>();
    const open: RawToolCall[] = [];
    for (const call of pending) {
      if (started.has(call.id))
        await ctx.answer({
          callId: call.id,
          name: call.name,
          status: "interrupted",
          content: TOOL_RESULT.interruptedWhileRunning,
        });
      else if (rerun) open.push(call);
      else
        await ctx.answer({
          callId: call.id,
          name: call.name,
          status: "not_started",
          content: TOOL_RESULT.notStarted,
        });
    }
    if (open.length > 0) await runToolCalls(ctx, open, undefined, true);
  }

  private async loop(ctx: TurnContext): Promise<void> {
    const maxSteps = effectiveMaxSteps(ctx.request);
    // The ids already taken, gathered from the history when a step first asks for calls (a reply
    // without calls, most of them, never scans the history for them).
    let callIds: Set<string> | undefined;
    for (;;) {
      if (ctx.aborted) return ctx.complete("interrupted");
      if (ctx.iterations >= maxSteps) return ctx.complete("max_iterations");
      if (this.steering.length > 0) await this.injectSteering(ctx);
      ctx.iterations++;
      const step = await runModelStep(ctx, this.compactor, this.outboundMemo);
      if (step.kind === "interrupted") return ctx.complete("interrupted");
      if (step.kind === "failed") return ctx.complete("error");
      ctx.addUsage(step.usage);
      ctx.finalText = step.text;
      // Calls past the per-step limit are dropped before anything is stored: a hostile or broken
      // model cannot grow the stored history (and every later request) by sending thousands.
      const { kept, dropped } = capStepCalls(step.toolCalls);
      let calls: RawToolCall[] = [];
      if (kept.length > 0) {
        callIds ??= callIdsOf(ctx.history);
        calls = normaliseCalls(kept, callIds, ctx.request.turnId, ctx.iterations);
      }
      // Told before the message is stored: a renderer that knows the answer is complete posts it
      // whole instead of starting a live message in the moment the store takes (nothing runs on
      // the message before it is stored — no tool, no person asked, no turn end).
      ctx.emit({
        type: "assistant-message-done",
        content: step.text,
        step: ctx.iterations,
        toolCalls: calls.length,
      });
      await ctx.append({
        role: "assistant",
        content: step.text || (calls.length > 0 ? null : ""),
        ...(calls.length > 0 ? { tool_calls: calls.map(toRecord) } : {}),
        meta: {
          at: ctx.stamp(),
          ...(calls.length > 0 ? { stepMode: ctx.mode } : {}),
          ...(step.usage ? { usage: step.usage } : {}),
          ...(dropped > 0 ? { droppedToolCalls: dropped } : {}),
        },
      });
      if (dropped > 0) {
        ctx.emit({ type: "notice", level: "warning", message: droppedCallsNotice(dropped) });
        noteDroppedCalls(ctx);
      }
      if (calls.length === 0) {
        const cutOff = cutOffNotice(step.finishReason);
        if (cutOff) ctx.emit({ type: "notice", level: "warning", message: cutOff });
        if (this.steering.length > 0 && !ctx.aborted) continue;
        return ctx.complete(ctx.aborted ? "interrupted" : "completed");
      }
      await runToolCalls(ctx, calls, step.finishReason);
    }
  }

  /** Settle this turn's system prompt before its first model call, showing its notices. */
  private settleSystemPrompt(ctx: TurnContext, prompt: TurnPrompt): void {
    for (const message of prompt.notices) ctx.emit({ type: "notice", level: "warning", message });
    ctx.instructions = prompt.text;
  }

  private async framed(
    ctx: TurnContext,
    framePrompt: NonNullable<TurnEngineOptions["framePrompt"]>,
  ): Promise<FramedPrompt | undefined> {
    try {
      return await framePrompt(ctx.request);
    } catch (error) {
      const message = `The message could not be prepared, so it is used as typed: ${error instanceof Error ? error.message : String(error)}`;
      ctx.emit({ type: "notice", level: "warning", message });
      return undefined;
    }
  }

  private async injectSteering(ctx: TurnContext): Promise<void> {
    while (this.steering.length > 0) {
      const { text, attachments } = this.steering.shift()!;
      await ctx.append({
        role: "user",
        content: text,
        ...(attachments.length > 0 ? { attachments } : {}),
        // The session layer takes steering only from the turn's requester.
        meta: { at: ctx.stamp(), steered: true, by: ctx.request.requester.userId },
      });
    }
  }
}

function refusal(message: string, recoverable: boolean): AgentEvent {
  return agentEvent({ type: "error", message, recoverable });
}
