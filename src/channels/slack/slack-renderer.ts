/**
 * SlackTurnRenderer: renders one turn's AgentEvents into its Slack thread. `handle` only updates
 * the turn document and queues work, so the engine never waits on Slack; the first flush runs
 * `firstFlushMs` after the turn began (an answer complete by then is one plain message) and then
 * at most every `streamIntervalMs` (native stream) or `editIntervalMs` (pages), each within its
 * method's rate tier.
 *
 * Two modes. Native: the answer streams through chat.*Stream, tool calls and plan steps as task
 * cards, Slack's own stop control as the Stop button. Pages (the fallback, latched when the
 * workspace refuses streaming, the stream breaks, or its text budget is used up): the document
 * is laid out as messages posted once and edited in place, the live page carrying a Stop button.
 * `close` finishes either way — the stream is stopped with the outcome under it, or the pages
 * are synced for the last time in a form Slack accepts.
 */
import type { Logger } from "pino";
import type { AgentEvent } from "../../core/events.js";
import { assertNever } from "../../core/events.js";
import type { TurnRenderer } from "../../core/thread-output.js";
import { describeError, type SlackClients } from "./slack-api.js";
import type { CapabilityLatch, ConversationKind } from "./slack-capabilities.js";
import { footerBlocks, layoutPages, TurnDocument } from "./slack-document.js";
import { ThinkingIndicator } from "./slack-indicator.js";
import { truncate } from "./slack-limits.js";
import { NativeOps } from "./slack-native-ops.js";
import { PageSync } from "./slack-pages.js";
import { type ToolLineState, toolLabel } from "./slack-status-lines.js";
import { NativeStream } from "./slack-stream.js";

export interface RendererOptions {
  readonly clients: SlackClients;
  readonly channel: string;
  readonly threadTs: string | undefined;
  readonly teamId: string;
  /** Who the turn answers (needed for native streaming outside DMs). */
  readonly recipientUserId: string | undefined;
  readonly kind: ConversationKind;
  readonly capabilities: CapabilityLatch;
  readonly logger: Logger;
  readonly editIntervalMs: number;
  readonly streamIntervalMs: number;
  readonly firstFlushMs: number;
  readonly statusDelayMs: number;
  readonly statusRefreshMs: number;
  /** Try native streaming at all (default on). */
  readonly nativeStreaming: boolean;
  readonly streamBudgetChars: number;
  /** The person stopped the native stream in Slack: interrupt the turn. */
  readonly requestStop: () => void;
}

const THINKING = "is thinking…";

/** A short, friendly version of a model failure. */
export function friendlyFailure(message: string): string {
  const detail = truncate(message.replace(/\s+/g, " ").trim(), 200);
  return detail.length > 0
    ? `Sorry — I couldn't finish this answer (${detail}). Press Retry to try again.`
    : "Sorry — I couldn't finish this answer. Press Retry to try again.";
}

export class SlackTurnRenderer implements TurnRenderer {
  private readonly doc = new TurnDocument();
  private readonly pages: PageSync;
  private readonly indicator: ThinkingIndicator | undefined;
  private native: NativeOps | undefined;
  private queue: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private lastFlushAt = 0;
  private backoffUntil = 0;
  private closed = false;
  private failure: string | undefined;
  private readonly startedAt = Date.now();

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

  async handle(event: AgentEvent): Promise<void> {
    if (this.closed) return;
    switch (event.type) {
      case "text-delta":
        this.doc.appendText(event.delta);
        this.native?.text(event.delta);
        break;
      case "reasoning-delta":
        this.indicator?.set(THINKING);
        return;
      case "assistant-message-done":
        this.native?.messageDone(event.content);
        this.doc.finishText(event.content);
        break;
      case "plan-updated":
        this.doc.plan = event.steps;
        this.native?.plan(event.steps);
        break;
      case "tool-call-started":
        this.setTool({
          callId: event.callId,
          name: event.name,
          preview: event.preview,
          status: "running",
          ...(event.clearedBy === undefined ? {} : { clearedBy: event.clearedBy }),
        });
        this.indicator?.set(`is running ${toolLabel(event)}…`);
        break;
      case "tool-output-delta":
        return;
      case "tool-call-finished": {
        const before = this.doc.tool(event.callId);
        this.setTool({
          callId: event.callId,
          name: event.name,
          preview: before?.preview ?? "",
          ...(before?.clearedBy === undefined ? {} : { clearedBy: before.clearedBy }),
          status: event.status,
          durationMs: event.durationMs,
          ...(event.reason === undefined ? {} : { reason: event.reason }),
        });
        this.indicator?.set(THINKING);
        break;
      }
      case "permission-required": {
        const before = this.doc.tool(event.callId);
        this.setTool({
          ...(before ?? { callId: event.callId, name: event.tool, preview: "", status: "running" }),
          waiting: "approval",
        });
        this.indicator?.set("");
        break;
      }
      case "question-asked":
        this.setTool({
          callId: event.callId,
          name: "ask_user",
          preview: event.questions[0]?.question ?? "",
          status: "running",
          waiting: "answer",
        });
        this.indicator?.set("");
        break;
      case "notice":
        if (event.level === "progress") {
          this.indicator?.set(truncate(event.message, 50));
          return;
        }
        this.note(`${event.level === "warning" ? ":warning:" : ":information_source:"} ${event.message}`);
        break;
      case "compaction-started":
        this.indicator?.set("is summarising earlier messages…");
        return;
      case "compaction-finished":
        this.note(`:broom: Summarised ${event.removedMessages} earlier messages to make room.`);
        this.indicator?.set(THINKING);
        break;
      case "turn-completed":
        this.complete(event);
        break;
      case "error":
        if (event.recoverable) this.note(`:warning: ${truncate(event.message, 300)}`);
        else this.failure = event.message;
        break;
      default:
        assertNever(event);
    }
    this.schedule();
  }

  private setTool(state: ToolLineState): void {
    this.doc.setTool(state);
    this.native?.tool(state);
  }

  private note(text: string): void {
    this.doc.note(text);
    this.native?.note(text);
  }

  private complete(event: Extract<AgentEvent, { type: "turn-completed" }>): void {
    if (!this.doc.hasText() && event.finalText.trim().length > 0) {
      this.native?.messageDone(event.finalText);
      this.doc.finishText(event.finalText);
    }
    switch (event.status) {
      case "completed":
        this.doc.outcome = { kind: "completed" };
        return;
      case "interrupted":
        this.doc.outcome = { kind: "interrupted" };
        return;
      case "max_iterations":
        this.doc.outcome = { kind: "max_iterations", iterations: event.iterations };
        return;
      case "error":
        this.doc.outcome = { kind: "failed", message: friendlyFailure(this.failure ?? "") };
        return;
      default:
        assertNever(event.status);
    }
  }

  private schedule(): void {
    if (this.closed || this.timer !== undefined) return;
    const now = Date.now();
    const notBefore =
      this.lastFlushAt === 0
        ? this.startedAt + this.options.firstFlushMs
        : this.lastFlushAt + (this.native ? this.options.streamIntervalMs : this.options.editIntervalMs);
    const delay = Math.max(0, notBefore - now, this.backoffUntil - now);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.enqueue(() => this.flushLive());
    }, delay);
  }

  private enqueue(work: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(work).catch((error: unknown) => {
      this.options.logger.warn({ err: describeError(error) }, "slack render step failed");
    });
    return this.queue;
  }

  private async flushLive(): Promise<void> {
    if (this.closed) return;
    this.lastFlushAt = Date.now();
    if (this.native) {
      await this.native.drain(false);
      if (this.native.ended) await this.leaveNative();
      return;
    }
    if (!this.doc.hasContent()) return;
    const wait = await this.pages.syncLive(layoutPages(this.doc));
    if (wait > 0) {
      this.backoffUntil = Date.now() + wait;
      this.schedule();
    }
  }

  /** Native streaming ended early: latch (when refused) and continue as pages on its message. */
  private async leaveNative(): Promise<void> {
    const native = this.native as NativeOps;
    this.native = undefined;
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
    if (this.doc.hasContent()) await this.pages.syncLive(layoutPages(this.doc));
  }

  async close(): Promise<void> {
    if (this.closed) return this.queue;
    this.closed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.doc.outcome.kind === "running") {
      this.doc.outcome = this.doc.isWaiting() ? { kind: "paused" } : { kind: "interrupted" };
    }
    await this.enqueue(() => this.finish());
    await this.indicator?.stop();
  }

  private async finish(): Promise<void> {
    const native = this.native;
    if (native) {
      await native.drain(true);
      if (!native.ended && native.stream.started) {
        const stopped = await native.stream.stop(footerBlocks(this.doc));
        if (stopped === "ok") return;
        native.fail(stopped);
      }
      if (native.ended) await this.leaveNative();
      this.native = undefined;
    }
    try {
      await this.pages.syncFinal(this.doc);
    } catch (error) {
      this.options.logger.error(
        { err: describeError(error), channel: this.options.channel, answerChars: this.doc.answer().length },
        "slack reply could not be delivered",
      );
    }
  }
}
