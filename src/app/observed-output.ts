/**
 * A ThreadOutputFactory decorator that feeds Metrics from the AgentEvents a channel renders:
 * turns started and finished (by status, with duration), tool calls (by status, with duration),
 * approvals requested and resolved (which moves the pending gauge) and turn errors. The wrapped
 * output renders exactly what it would have rendered; a renderer that throws is counted and its
 * error passed on unchanged.
 */
import type { Card, CardRef } from "../core/card.js";
import type { AgentEvent, ToolCallStatus, TurnStatus } from "../core/events.js";
import { type Metrics, UNKNOWN_LABEL } from "../ops/metrics.js";
import { UNKNOWN_TOOL_REASON } from "../engine/tool-results.js";
import type { ThreadOutput, ThreadOutputFactory, TurnRenderer } from "../core/thread-output.js";
import type { ThreadTarget } from "../core/thread-target.js";
import type { Clock } from "./provider-metrics.js";

/** How an approval ended, read from the status of its call's `tool-call-finished`. */
export function approvalOutcomeOf(status: ToolCallStatus): string {
  switch (status) {
    case "ok":
    case "error":
      return "approved";
    case "denied":
      return "denied";
    case "interrupted":
    case "not_started":
      return "interrupted";
  }
}

/** Outcome recorded for approvals still open when their turn's renderer closed. */
export const ABANDONED_APPROVAL = "abandoned";

/** Counts one turn's events, then hands each to the channel's renderer. */
class ObservedRenderer implements TurnRenderer {
  private readonly started: number;
  private readonly openApprovals = new Set<string>();
  private finished = false;
  private closed = false;

  constructor(
    private readonly inner: TurnRenderer,
    private readonly platform: string,
    private readonly metrics: Metrics,
    private readonly clock: Clock,
  ) {
    this.started = clock();
    metrics.turnStarted(platform);
  }

  /** Counts the event, then hands it on: a promise only when the inner renderer returns one. */
  handle(event: AgentEvent): Promise<void> | undefined {
    this.observe(event);
    let handled: Promise<void> | undefined;
    try {
      handled = this.inner.handle(event);
    } catch (error) {
      this.metrics.error(this.platform);
      throw error;
    }
    return handled?.catch((error: unknown) => {
      this.metrics.error(this.platform);
      throw error;
    });
  }

  async close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      for (const _ of this.openApprovals) this.metrics.approvalResolved(this.platform, ABANDONED_APPROVAL);
      this.openApprovals.clear();
      // A turn whose stream ended without `turn-completed` was abandoned (e.g. the turn failed).
      if (!this.finished) this.finish("interrupted");
    }
    try {
      await this.inner.close();
    } catch (error) {
      this.metrics.error(this.platform);
      throw error;
    }
  }

  private observe(event: AgentEvent): void {
    switch (event.type) {
      case "permission-required":
        if (!this.openApprovals.has(event.callId)) {
          this.openApprovals.add(event.callId);
          this.metrics.approvalRequested(this.platform);
        }
        return;
      case "tool-call-finished":
        // A name the model made up is not a tool: it must not become a metric label.
        this.metrics.toolCallFinished(
          event.reason === UNKNOWN_TOOL_REASON ? UNKNOWN_LABEL : event.name,
          event.status,
          event.durationMs,
        );
        if (this.openApprovals.delete(event.callId))
          this.metrics.approvalResolved(this.platform, approvalOutcomeOf(event.status));
        return;
      case "turn-completed":
        if (!this.finished) this.finish(event.status);
        return;
      case "error":
        this.metrics.error("turn");
        return;
      default:
        return;
    }
  }

  private finish(status: TurnStatus): void {
    this.finished = true;
    this.metrics.turnFinished(this.platform, status, this.clock() - this.started);
  }
}

/** A ThreadOutput whose turns are observed; cards and texts go straight through. */
class ObservedOutput implements ThreadOutput {
  /** Present exactly when the inner output has it (the console). */
  readonly reshowCard?: (card: Card) => Promise<CardRef>;

  constructor(
    private readonly inner: ThreadOutput,
    private readonly platform: string,
    private readonly metrics: Metrics,
    private readonly clock: Clock,
  ) {
    if (inner.reshowCard) this.reshowCard = (card) => inner.reshowCard?.(card) ?? inner.postCard(card);
  }

  beginTurn(info: { readonly sessionId: string; readonly turnId: string }): TurnRenderer {
    return new ObservedRenderer(this.inner.beginTurn(info), this.platform, this.metrics, this.clock);
  }

  postCard(card: Card): Promise<CardRef> {
    return this.inner.postCard(card);
  }

  updateCard(ref: CardRef, card: Card): Promise<void> {
    return this.inner.updateCard(ref, card);
  }

  postText(text: string): Promise<void> {
    return this.inner.postText(text);
  }
}

/** Wrap a platform's output factory so every turn it renders is counted in `metrics`. */
export function observeOutputs(
  platform: string,
  factory: ThreadOutputFactory,
  metrics: Metrics,
  clock: Clock = () => performance.now(),
): ThreadOutputFactory {
  return (target: ThreadTarget) => new ObservedOutput(factory(target), platform, metrics, clock);
}
