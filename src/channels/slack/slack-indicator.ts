/**
 * The "working on it" indicator of a turn: the assistant thread status ("is thinking…", "is
 * running `npm test`…"), for a person who has waited without seeing anything. Nothing is shown
 * before the turn has run `delayMs` (a reply by then needs no indicator), and nothing once the
 * reply is appearing: the reply itself (its stream, task cards and tool lines) shows the work
 * from then on. Slack clears the status itself when the bot posts a reply or after two minutes,
 * so a shown status is re-sent on a timer and is cleared with a call only when the reply was not
 * a post. Where the workspace refuses the status, it falls back (latched per conversation kind)
 * to an hourglass reaction on the thread's first message, removed at the end. Everything here is
 * best-effort.
 */
import type { Logger } from "pino";
import { describeError, type SlackClients, slackErrorCode } from "./slack-api.js";
import { type CapabilityLatch, isTransientFailure } from "./slack-capabilities.js";
import type { ConversationKind } from "./slack-conversation-kind.js";

const REACTION = "hourglass_flowing_sand";

export interface IndicatorOptions {
  readonly clients: SlackClients;
  readonly channel: string;
  readonly threadTs: string;
  readonly kind: ConversationKind;
  readonly capabilities: CapabilityLatch;
  readonly logger: Logger;
  /** How often the status is re-sent while shown (Slack drops it after 2 min). */
  readonly refreshMs: number;
  /** Nothing is shown before the turn has run this long (quick turns need no indicator). */
  readonly delayMs: number;
}

export class ThinkingIndicator {
  /** What should show now ("" for nothing). */
  private status = "";
  /** What the thread status shows, as far as we know. */
  private sent = "";
  private reacted = false;
  /** A status call is on its way: it may reach Slack after the reply. */
  private calling = false;
  /** A call was queued: until then nothing was shown, and nothing needs clearing. */
  private queued = false;
  /** The reply is appearing, or the turn is over: nothing more to show. */
  private over = false;
  private refreshTimer: NodeJS.Timeout | undefined;
  private delayTimer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  private readonly shownFrom: number;

  constructor(private readonly options: IndicatorOptions) {
    this.shownFrom = Date.now() + options.delayMs;
  }

  /** What the agent is doing now ("is thinking…"; "" while it waits for a person). */
  set(status: string): void {
    if (this.over) return;
    this.status = status;
    const wait = this.shownFrom - Date.now();
    if (wait <= 0) this.enqueue(false);
    else if (this.delayTimer === undefined) {
      this.delayTimer = setTimeout(() => this.enqueue(false), wait);
      this.delayTimer.unref();
    }
  }

  /**
   * The turn's reply is appearing: no status from now on. A shown status is taken as cleared
   * when the reply is a posted message (`posted`: Slack clears it then), unless a status call
   * was still on its way; otherwise it is cleared here.
   */
  replying(posted: boolean): void {
    if (this.over) return;
    this.over = true;
    this.status = "";
    this.clearTimers();
    if (!this.queued) return;
    const clearedBySlack = posted && !this.calling;
    this.chain = this.chain.then(() => {
      if (clearedBySlack) this.sent = "";
      return this.apply(false);
    });
  }

  /** Hide the indicator and wait for every pending call. */
  async stop(): Promise<void> {
    this.over = true;
    this.status = "";
    this.clearTimers();
    if (!this.queued) return;
    this.enqueue(false);
    await this.chain;
  }

  private clearTimers(): void {
    if (this.refreshTimer !== undefined) clearInterval(this.refreshTimer);
    this.refreshTimer = undefined;
    if (this.delayTimer !== undefined) clearTimeout(this.delayTimer);
    this.delayTimer = undefined;
  }

  private enqueue(refresh: boolean): void {
    this.queued = true;
    this.chain = this.chain.then(() => this.apply(refresh));
  }

  private async apply(refresh: boolean): Promise<void> {
    const wanted = this.status;
    if (!this.options.capabilities.isOff("status", this.options.kind)) {
      if (refresh ? wanted.length === 0 : wanted === this.sent) return;
      try {
        this.calling = true;
        await this.options.clients.edits.assistant.threads.setStatus({
          channel_id: this.options.channel,
          thread_ts: this.options.threadTs,
          status: wanted,
        });
        this.sent = wanted;
        this.keepFresh();
        return;
      } catch (error) {
        if (isTransientFailure(error)) {
          this.options.logger.debug({ err: describeError(error) }, "slack status update skipped");
          return;
        }
        this.options.capabilities.turnOff("status", this.options.kind, describeError(error));
        this.options.logger.info(
          { err: describeError(error), kind: this.options.kind },
          "slack assistant status unavailable; using a reaction instead",
        );
      } finally {
        this.calling = false;
      }
    }
    await this.react(wanted.length > 0);
  }

  /** While a status shows, re-send it before Slack's two-minute timeout drops it. */
  private keepFresh(): void {
    if (this.sent.length === 0 || this.over) {
      if (this.refreshTimer !== undefined) clearInterval(this.refreshTimer);
      this.refreshTimer = undefined;
    } else if (this.refreshTimer === undefined) {
      this.refreshTimer = setInterval(() => this.enqueue(true), this.options.refreshMs);
      this.refreshTimer.unref();
    }
  }

  private async react(on: boolean): Promise<void> {
    if (on === this.reacted) return;
    const args = { channel: this.options.channel, timestamp: this.options.threadTs, name: REACTION };
    try {
      if (on) await this.options.clients.edits.reactions.add(args);
      else await this.options.clients.edits.reactions.remove(args);
      this.reacted = on;
    } catch (error) {
      const code = slackErrorCode(error);
      if (code === "already_reacted" || code === "no_reaction") this.reacted = on;
      else this.options.logger.debug({ err: describeError(error) }, "slack reaction indicator failed");
    }
  }
}
