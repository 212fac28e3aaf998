/**
 * ChannelSupervisor: connects one channel in the background, so a platform that cannot be
 * reached never holds up start-up, the other channels or the console. Each attempt has a
 * deadline; a failure is classified (ServiceFailure) and retried after a growing, capped wait
 * when retrying can help (unreachable, rate-limited), or left for the operator to fix when it
 * cannot (rejected token, misconfiguration). The first failure prints a warning line with the
 * reason and the fix at once, later ones at growing intervals (attempts 2, 4, 8, …). Its state
 * and reason feed /readyz; how long it has been down feeds /healthz.
 */
import { backoffMs } from "../core/backoff.js";
import { messageOf, ServiceFailure } from "../core/failure.js";
import { settlesWithin } from "../core/settles-within.js";
import type { RunningChannel } from "./app-parts.js";

export type ChannelState = "connecting" | "retrying" | "up" | "down" | "failed" | "stopped";

export interface ChannelStatus {
  readonly state: ChannelState;
  /** Why it is not up (the last failure's line), if so. */
  readonly reason?: string;
}

export interface SupervisorOptions {
  readonly platform: string;
  /** One connection attempt; resolves with the running channel; stops what it began on abort. */
  readonly connect: (signal: AbortSignal) => Promise<RunningChannel>;
  /** Where warning lines go (the operator's screen and the log). */
  readonly warn: (line: string, failure: ServiceFailure) => void;
  /** Told once when the channel is up. */
  readonly onUp?: (channel: RunningChannel) => void;
  /** Longest one attempt may take. */
  readonly attemptMs: number;
  /** First and longest wait between attempts. */
  readonly backoff: { readonly initialMs: number; readonly maxMs: number };
  readonly now?: () => number;
}

/** Failures that are not classified yet: retried, since nothing says retrying is useless. */
function classify(error: unknown, platform: string): ServiceFailure {
  if (error instanceof ServiceFailure) return error;
  return new ServiceFailure(
    platform,
    "unreachable",
    messageOf(error),
    "see the log for details; Coworker retries",
    {
      cause: error,
    },
  );
}

/** Supervises the connection of one channel (see the module comment). */
export class ChannelSupervisor {
  private state: ChannelState = "connecting";
  private reason: string | undefined;
  private channel: RunningChannel | undefined;
  private downSince: number;
  private stopped = false;
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private attemptController: AbortController | undefined;
  private readonly now: () => number;
  private endFirstAttempt: () => void = () => undefined;
  /** Resolves once the first connection attempt has ended, connected or not (or intake stopped). */
  readonly firstAttempt = new Promise<void>((resolve) => {
    this.endFirstAttempt = resolve;
  });

  constructor(private readonly options: SupervisorOptions) {
    this.now = options.now ?? Date.now;
    this.downSince = this.now();
  }

  get platform(): string {
    return this.options.platform;
  }

  /** Begin connecting in the background (idempotent). */
  start(): void {
    this.loop ??= this.supervise();
  }

  /** The state now; a connected channel whose link dropped counts as "down". */
  async status(): Promise<ChannelStatus> {
    if (this.state === "up" && this.channel !== undefined) {
      const connected = await this.channel.connected();
      if (!connected) {
        this.downSince = Math.min(this.downSince, this.now());
        return { state: "down", reason: "the connection dropped; the channel is reconnecting" };
      }
      this.downSince = Number.POSITIVE_INFINITY;
      return { state: "up" };
    }
    return this.reason === undefined ? { state: this.state } : { state: this.state, reason: this.reason };
  }

  /** Milliseconds the channel has not been up (0 when it is up). */
  async downForMs(): Promise<number> {
    const { state } = await this.status();
    if (state === "up" || state === "stopped") return 0;
    return Math.max(0, this.now() - this.downSince);
  }

  /** Stop retrying, and stop the channel's intake if it is running. */
  async stopIntake(): Promise<void> {
    this.stopped = true;
    this.state = "stopped";
    this.endFirstAttempt();
    this.wake?.();
    this.attemptController?.abort();
    await this.channel?.stopIntake();
  }

  /** Close the channel if it connected (last step of shutdown). Never waits for a pending attempt. */
  async close(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.channel?.close();
  }

  private async supervise(): Promise<void> {
    const { initialMs, maxMs } = this.options.backoff;
    for (let attempt = 1; !this.stopped; attempt++) {
      const delay = backoffMs(attempt - 1, initialMs, maxMs);
      try {
        const channel = await this.attempt();
        this.endFirstAttempt();
        if (this.stopped) {
          await channel.close();
          return;
        }
        this.channel = channel;
        this.state = "up";
        this.reason = undefined;
        this.downSince = Number.POSITIVE_INFINITY;
        this.options.onUp?.(channel);
        return;
      } catch (error) {
        this.endFirstAttempt();
        if (this.stopped) return;
        const failure = classify(error, this.options.platform);
        this.reason = failure.line();
        if (!failure.retryable) {
          this.state = "failed";
          this.options.warn(`✗ ${failure.line()} (not retrying: fix it, then restart Coworker)`, failure);
          return;
        }
        this.state = "retrying";
        // Powers of two: the first failure, then the 2nd, 4th, 8th … so a long outage stays visible
        // without flooding the screen.
        if ((attempt & (attempt - 1)) === 0) {
          const again = delay < 1_000 ? `${delay} ms` : `${Math.round(delay / 1_000)} s`;
          this.options.warn(`! ${failure.line()} (attempt ${attempt}; next try in ${again})`, failure);
        }
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, delay).unref();
      });
    }
  }

  /**
   * One attempt with its deadline. An attempt past it is aborted, and fails only once it has
   * settled (closed if it connected late), so the next attempt never overlaps what it began (a
   * second Telegram poller, a second socket); one that does not settle within another deadline
   * fails all the same.
   */
  private attempt(): Promise<RunningChannel> {
    const controller = new AbortController();
    this.attemptController = controller;
    const pending = this.options.connect(controller.signal);
    return new Promise<RunningChannel>((resolve, reject) => {
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
        const ms = this.options.attemptMs;
        const span = ms < 1_000 ? `${ms} ms` : `${Math.round(ms / 1_000)} s`;
        const failure = new ServiceFailure(
          this.options.platform,
          "unreachable",
          `no connection within ${span}`,
          "check network access to the platform; Coworker retries",
        );
        const ended = pending.then((late) => late.close()).catch(() => undefined);
        void settlesWithin(ended, ms).then(() => reject(failure));
      }, this.options.attemptMs);
      timer.unref();
      pending.then(
        (channel) => {
          clearTimeout(timer);
          if (!timedOut) resolve(channel);
        },
        (error: unknown) => {
          clearTimeout(timer);
          if (!timedOut) reject(error);
        },
      );
    });
  }
}
