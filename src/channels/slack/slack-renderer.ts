/**
 * SlackTurnRenderer: renders one turn's AgentEvents into its Slack thread. `handle` only folds
 * the event into the shared turn view (channels/shared/turn-view.ts) and marks the thread stale,
 * so the engine never waits on Slack; the EditPacer runs the first flush `firstFlushMs` after
 * the turn began and then at most every `streamIntervalMs` (native stream) or `editIntervalMs`
 * (pages), each within its method's rate tier. A turn that is complete by its first flush —
 * however old it is by then — goes out as one posted message, never as a stream (start/stop are
 * Tier 2, ~20 a minute per workspace). The thinking status shows what the agent does only while
 * the person has waited `statusDelayMs` and sees nothing yet.
 *
 * Two modes. Native: the answer streams through chat.*Stream, tool calls and plan steps as task
 * cards, Slack's own stop control as the Stop button. Pages (the fallback, latched when the
 * workspace refuses streaming, the stream breaks, or its text budget is used up): the view
 * is laid out as messages posted once and edited in place, the live page carrying a Stop button.
 * `close` finishes either way — the stream is stopped with the outcome under it, or the pages
 * are synced for the last time in a form Slack accepts.
 */
import { clip } from "../../core/surrogate-pairs.js";
import type { Logger } from "pino";
import type { AgentEvent } from "../../core/events.js";
import type { TurnRenderer } from "../../core/thread-output.js";
import { EditPacer, type SendOutcome } from "../shared/edit-pacer.js";
import { toolLabel } from "../shared/tool-line-label.js";
import {
  type Activity,
  answerText,
  closeTurn,
  EMPTY_TURN,
  foldTurn,
  hasAnswerText,
  hasContent,
  type TurnView,
  toolLineOf,
} from "../shared/turn-view.js";
import { AnswerSections } from "./slack-answer-sections.js";
import { describeError, type SlackClients } from "./slack-api.js";
import type { CapabilityLatch } from "./slack-capabilities.js";
import type { ConversationKind } from "./slack-conversation-kind.js";
import { footerBlocks, layoutPages } from "./slack-document.js";
import { PAGE_BUDGET } from "./slack-limits.js";
import { ThinkingIndicator } from "./slack-indicator.js";
import { NativeOps } from "./slack-native-ops.js";
import { PageSync } from "./slack-pages.js";
import { streamNoteLine } from "./slack-status-lines.js";
import { NativeStream } from "./slack-stream.js";

/** How turns are rendered (tunable for tests and benchmarks). */
export interface RenderSettings {
  /**
   * Minimum time between live edits of one turn's page messages (default 1,250 ms: chat.update
   * is Tier 3, ~50 a minute).
   */
  readonly editIntervalMs: number;
  /**
   * Minimum time between appends to one turn's native stream (default 650 ms: chat.appendStream
   * is Tier 4, ~100 a minute, and a long answer should use most of it).
   */
  readonly streamIntervalMs: number;
  /**
   * How long after the turn began its first content is shown (default 250 ms): an answer that
   * is complete by then goes out as one message, without a stream (start/stopStream are Tier 2).
   */
  readonly firstFlushMs: number;
  /**
   * How long a person waits without seeing anything before the thinking status shows (default
   * 1 s: a reply within about a second keeps the flow of a conversation, and needs no indicator).
   */
  readonly statusDelayMs: number;
  /** How often the thinking status is re-sent (Slack drops it after 2 min; default 90 s). */
  readonly statusRefreshMs: number;
  /** Try Slack's native streaming first (default true). */
  readonly nativeStreaming: boolean;
  /** Text one native stream may hold before the rest continues as pages (default 10,000). */
  readonly streamBudgetChars: number;
}

export const DEFAULT_RENDER_SETTINGS: RenderSettings = Object.freeze({
  editIntervalMs: 1_250,
  streamIntervalMs: 650,
  firstFlushMs: 250,
  statusDelayMs: 1_000,
  statusRefreshMs: 90_000,
  nativeStreaming: true,
  streamBudgetChars: 10_000,
});

export interface RendererOptions extends RenderSettings {
  readonly clients: SlackClients;
  readonly channel: string;
  readonly threadTs: string | undefined;
  readonly teamId: string;
  /** Who the turn answers (needed for native streaming outside DMs). */
  readonly recipientUserId: string | undefined;
  readonly kind: ConversationKind;
  readonly capabilities: CapabilityLatch;
  readonly logger: Logger;
  /** The person stopped the native stream in Slack: interrupt the turn. */
  readonly requestStop: () => void;
}

const THINKING = "is thinking…";

/** The thinking status for what the agent is doing ("" hides it while the turn waits for a person). */
function statusOf(activity: Activity): string {
  switch (activity.kind) {
    case "thinking":
      return THINKING;
    case "running":
      return `is running ${toolLabel(activity.call)}…`;
    case "progress":
      return clip(activity.message, 50);
    case "compacting":
      return "is summarising earlier messages…";
    case "waiting":
      return "";
  }
}

/** Events that change nothing the thread shows (only, at most, the thinking status). */
function showsNothing(event: AgentEvent): boolean {
  switch (event.type) {
    case "reasoning-delta":
    case "tool-output-delta":
    case "compaction-started":
      return true;
    case "notice":
      return event.level === "progress";
    default:
      return false;
  }
}

export class SlackTurnRenderer implements TurnRenderer {
  private turn: TurnView = EMPTY_TURN;
  private readonly pages: PageSync;
  /** The answer's sections, settled a stretch at a time (a long answer is not converted whole per beat). */
  private readonly sections = new AnswerSections();
  private readonly indicator: ThinkingIndicator | undefined;
  private readonly pacer: EditPacer;
  private native: NativeOps | undefined;
  private closing: Promise<void> | undefined;

  constructor(private readonly options: RendererOptions) {
    this.pages = new PageSync({
      clients: options.clients,
      channel: options.channel,
      threadTs: options.threadTs,
      logger: options.logger,
    });
    if (options.threadTs !== undefined) {
      this.indicator = new ThinkingIndicator({
        clients: options.clients,
        channel: options.channel,
        threadTs: options.threadTs,
        kind: options.kind,
        capabilities: options.capabilities,
        logger: options.logger,
        refreshMs: options.statusRefreshMs,
        delayMs: options.statusDelayMs,
      });
      this.indicator.set(THINKING);
    }
    this.native = this.createNative();
    this.pacer = new EditPacer({
      budget: {
        intervalMs: this.native ? options.streamIntervalMs : options.editIntervalMs,
        firstDelayMs: options.firstFlushMs,
      },
      send: () => this.flushLive(),
      onError: (error) => this.options.logger.warn({ err: describeError(error) }, "slack render step failed"),
    });
  }

  private createNative(): NativeOps | undefined {
    const o = this.options;
    if (!o.nativeStreaming || o.threadTs === undefined || o.capabilities.isOff("stream", o.kind))
      return undefined;
    const recipient =
      o.kind === "channel"
        ? o.recipientUserId !== undefined
          ? { userId: o.recipientUserId, teamId: o.teamId }
          : undefined
        : undefined;
    if (o.kind === "channel" && recipient === undefined) return undefined;
    const stream = new NativeStream({
      client: o.clients.edits,
      channel: o.channel,
      threadTs: o.threadTs,
      ...(recipient ? { recipient } : {}),
      budgetChars: o.streamBudgetChars,
    });
    return new NativeOps(stream);
  }

  /** Fold the event into the view; Slack is called later, by the pacer (so nothing is awaited here). */
  handle(event: AgentEvent): undefined {
    if (this.closing) return undefined;
    const before = this.turn;
    const view = foldTurn(before, event);
    this.turn = view;
    if (view.activity !== before.activity) this.indicator?.set(statusOf(view.activity));
    if (this.native) this.feedNative(this.native, event, before, view);
    if (!showsNothing(event)) this.pacer.changed();
    return undefined;
  }

  /** Queue what the event adds to the native stream: text, task cards, notes. */
  private feedNative(native: NativeOps, event: AgentEvent, before: TurnView, view: TurnView): void {
    switch (event.type) {
      case "text-delta":
        native.text(event.delta);
        return;
      case "assistant-message-done":
        native.messageDone(event.content);
        return;
      case "plan-updated":
        native.plan(event.steps);
        return;
      case "tool-call-started":
      case "tool-call-finished":
      case "permission-required":
      case "question-asked": {
        const line = toolLineOf(view, event.callId);
        if (line) native.tool(line);
        return;
      }
      case "notice":
      case "compaction-finished":
      case "error": {
        const added = view.items.at(-1);
        const line =
          added !== before.items.at(-1) && added?.kind === "note" ? streamNoteLine(added.note) : undefined;
        if (line !== undefined) native.note(line);
        return;
      }
      case "turn-completed":
        if (!hasAnswerText(before) && event.finalText.trim().length > 0) native.messageDone(event.finalText);
        return;
      default:
        return;
    }
  }

  private async flushLive(): Promise<SendOutcome> {
    // A turn complete before its stream started is one posted message, whatever its age; an answer
    // complete while nothing is shown yet waits the moment until the turn ends, to go out whole.
    if (this.turn.outcome.kind !== "running") this.dropUnstartedNative();
    else if (this.turn.answered && !this.showsAnything()) return "unchanged";
    const native = this.native;
    if (native) {
      await native.drain(false);
      if (native.stream.started) this.indicator?.replying(false);
      if (native.ended) await this.leaveNative();
      return "sent";
    }
    if (!hasContent(this.turn)) return "unchanged";
    this.indicator?.replying(true);
    const wait = await this.pages.syncLive(this.layout());
    return wait > 0 ? { retryAfterMs: wait } : "sent";
  }

  /** Whether the thread shows anything of the turn yet (a started stream or a posted page). */
  private showsAnything(): boolean {
    return this.native?.stream.started === true || this.pages.started;
  }

  /** Nothing went to the native stream yet: the turn continues as pages, without latching. */
  private dropUnstartedNative(): void {
    if (this.native === undefined || this.native.stream.started) return;
    this.native = undefined;
    this.pacer.useInterval(this.options.editIntervalMs);
  }

  /** Native streaming ended early: latch (when refused) and continue as pages on its message. */
  private async leaveNative(): Promise<void> {
    const native = this.native as NativeOps;
    this.native = undefined;
    this.pacer.useInterval(this.options.editIntervalMs);
    const { stream, result } = native;
    if (result === "stopped_by_user") this.options.requestStop();
    if (result === "full") await stream.stop();
    if (result === "failed" && !stream.started && !stream.failureTransient) {
      this.options.capabilities.turnOff("stream", this.options.kind, stream.failure ?? "refused");
      this.options.logger.info(
        { err: stream.failure, kind: this.options.kind },
        "slack native streaming unavailable; posting and updating instead",
      );
    }
    if (stream.ts !== undefined) this.pages.adopt(stream.ts);
    if (!hasContent(this.turn)) return;
    this.indicator?.replying(true);
    await this.pages.syncLive(this.layout());
  }

  /** The turn's pages as they stand. */
  private layout() {
    return layoutPages(this.turn, PAGE_BUDGET, this.sections);
  }

  async close(): Promise<void> {
    this.closing ??= (async () => {
      this.turn = closeTurn(this.turn);
      await this.pacer.finish();
      try {
        await this.finish();
      } catch (error) {
        this.options.logger.warn({ err: describeError(error) }, "slack render step failed");
      }
      await this.indicator?.stop();
    })();
    return this.closing;
  }

  private async finish(): Promise<void> {
    this.dropUnstartedNative();
    const native = this.native;
    if (native) {
      await native.drain(true);
      if (!native.ended) {
        const stopped = await native.stream.stop(footerBlocks(this.turn));
        if (stopped === "ok") return;
        native.fail(stopped);
      }
      if (native.ended) await this.leaveNative();
      this.native = undefined;
    }
    try {
      this.indicator?.replying(true);
      await this.pages.syncFinal(this.turn, this.sections);
    } catch (error) {
      this.options.logger.error(
        {
          err: describeError(error),
          channel: this.options.channel,
          answerChars: answerText(this.turn).length,
        },
        "slack reply could not be delivered",
      );
    }
  }
}
