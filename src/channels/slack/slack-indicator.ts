/**
 * The "working on it" indicator of a turn. Primarily the assistant thread status
 * (assistant.threads.setStatus "is thinking…", "is running `npm test`…"), which Slack clears by
 * itself after two minutes or when the bot posts, so it is re-sent on a timer while the turn
 * runs. A turn that is over within `delayMs` shows no indicator at all. Where the workspace refuses the status, it falls back (latched per conversation kind)
 * to an hourglass reaction on the thread's first message. Everything here is best-effort.
 */
import type { Logger } from "pino";
import { describeError, type SlackClients, slackErrorCode } from "./slack-api.js";
import { type CapabilityLatch, type ConversationKind, isTransientFailure } from "./slack-capabilities.js";

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
  private status = "";
  private sent = "";
  private reacted = false;
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  private readonly shownFrom: number;
  private delayTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: IndicatorOptions) {
    this.shownFrom = Date.now() + options.delayMs;
  }

  /** Show `status` ("is thinking…"); an empty string hides the indicator. */
  set(status: string): void {
    this.status = status;
    if (status.length > 0 && this.timer === undefined) {
      this.timer = setInterval(() => this.enqueue(true), this.options.refreshMs);
      this.timer.unref();
    }
    if (status.length === 0) this.clearTimer();
    const wait = this.shownFrom - Date.now();
    if (wait <= 0) this.enqueue(false);
    else if (this.delayTimer === undefined) {
      this.delayTimer = setTimeout(() => this.enqueue(false), wait);
      this.delayTimer.unref();
    }
  }

  /** Hide the indicator and wait for every pending call. */
  async stop(): Promise<void> {
    this.status = "";
    this.clearTimer();
    this.enqueue(false);
    await this.chain;
  }

  private clearTimer(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    if (this.delayTimer !== undefined) clearTimeout(this.delayTimer);
    this.delayTimer = undefined;
  }

  private enqueue(refresh: boolean): void {
    this.chain = this.chain.then(() => this.apply(refresh));
  }

  private async apply(refresh: boolean): Promise<void> {
    const wanted = this.status;
    if (!refresh && wanted === this.sent) return;
    if (refresh && wanted.length === 0) return;
    if (!this.options.capabilities.isOff("status", this.options.kind)) {
      try {
        await this.options.clients.edits.assistant.threads.setStatus({
          channel_id: this.options.channel,
          thread_ts: this.options.threadTs,
          status: wanted,
        });
        this.sent = wanted;
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
      }
    }
    await this.react(wanted.length > 0);
    this.sent = wanted;
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
