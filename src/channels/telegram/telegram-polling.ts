/**
 * Long polling with @grammyjs/runner, supervised: the runner retries network blips itself (for at
 * most five minutes, at a slowly growing interval), but stops on a 409 (another process polls the same token, or a webhook is set) — we report that
 * clearly and start it again after an exponential backoff instead of crash-looping. A 401 (bad
 * token) stops polling for good. "Healthy" means the last getUpdates answered. Starting removes
 * any webhook first (Telegram refuses getUpdates while one is set).
 */
import { type RunnerHandle, run } from "@grammyjs/runner";
import type { Bot, Transformer } from "grammy";
import type { Logger } from "pino";
import { backoffMs } from "../../core/backoff.js";
import type { ChannelHealth } from "../channel-adapter.js";
import { errorText, isConflict, isUnauthorized } from "./telegram-errors.js";
import type { TelegramReceiver } from "./telegram-receiver.js";

export interface PollingOptions {
  readonly allowedUpdates: readonly string[];
  readonly logger: Logger;
  readonly backoff: { readonly initialMs: number; readonly maxMs: number };
  /** Long-poll timeout in seconds. */
  readonly timeoutSeconds?: number;
  /** Each getUpdates answer as the runner is to read it (the intake's screen: telegram-intake.ts). */
  readonly screen: <R extends PolledAnswer>(answer: R) => R;
}

/** The part of a getUpdates answer read here. */
interface PolledAnswer {
  readonly ok: boolean;
  readonly error_code?: number;
  readonly description?: string;
  readonly result?: unknown;
}

/** The long-polling TelegramReceiver: supervises the runner (see module comment). */
export class PollingReceiver implements TelegramReceiver {
  readonly mode = "polling";
  readonly description = "polling";
  private handle: RunnerHandle | undefined;
  private stopped = false;
  private healthy = false;
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly bot: Bot,
    private readonly options: PollingOptions,
  ) {
    bot.api.config.use(this.observe());
  }

  /**
   * Watches getUpdates outcomes — success marks the loop healthy, failures are logged once each —
   * and screens each answer.
   */
  private observe(): Transformer {
    return (prev, method, payload, signal) =>
      method === "getUpdates" ? this.observed(prev(method, payload, signal)) : prev(method, payload, signal);
  }

  /** One getUpdates answer, watched and screened (see `observe`): one `then` on the call, once a poll. */
  private observed<R extends PolledAnswer>(answer: Promise<R>): Promise<R> {
    return answer.then(
      (result) => {
        if (result.ok) this.healthy = true;
        else if (!this.stopped && result.error_code !== 409) {
          this.options.logger.warn(
            { code: result.error_code, description: result.description },
            "telegram getUpdates failed",
          );
        }
        return this.options.screen(result);
      },
      (error: unknown) => {
        this.healthy = false;
        if (!this.stopped) this.options.logger.warn({ err: errorText(error) }, "telegram getUpdates failed");
        throw error;
      },
    );
  }

  /**
   * Remove any webhook, then poll in the background until `stop`; after `stop` this starts again
   * (the poller election hands polling back and forth between processes).
   */
  async start(): Promise<void> {
    if (this.loop) return;
    this.stopped = false;
    await this.bot.api.deleteWebhook();
    this.loop ??= this.supervise();
  }

  /** Polling works: the runner runs and its last getUpdates answered. */
  health(): ChannelHealth {
    if (this.stopped) return { ready: false, state: "stopped" };
    if (!this.loop) return { ready: false, state: "idle" };
    const ready = this.handle?.isRunning() === true && this.healthy;
    return { ready, state: ready ? "polling" : "retrying" };
  }

  port(): number | undefined {
    return undefined;
  }

  private async supervise(): Promise<void> {
    const { initialMs, maxMs } = this.options.backoff;
    // Restarts since the pause was last reset: each one doubles it.
    let restarts = 0;
    while (!this.stopped) {
      const startedAt = Date.now();
      this.handle = run(this.bot, {
        runner: {
          silent: true,
          // The runner's own retries grow by 100 ms each; after 5 minutes of failures it gives up
          // and this loop restarts it (its default doubling would reach hours between polls).
          retryInterval: "quadratic",
          maxRetryTime: 5 * 60 * 1000,
          fetch: {
            timeout: this.options.timeoutSeconds ?? 30,
            allowed_updates: [...this.options.allowedUpdates] as never,
          },
        },
      });
      try {
        await this.handle.task();
        if (this.stopped) return;
        this.options.logger.warn("telegram runner ended on its own; restarting");
      } catch (error) {
        if (this.stopped) return;
        if (isUnauthorized(error)) {
          this.options.logger.fatal(
            { err: errorText(error) },
            "telegram rejected the bot token (401); polling stopped",
          );
          this.stopped = true;
          return;
        }
        if (Date.now() - startedAt > maxMs) restarts = 0;
        this.options.logger.error(
          { err: errorText(error), retryInMs: backoffMs(restarts, initialMs, maxMs) },
          isConflict(error)
            ? "telegram 409 conflict: another process is polling this bot token (or a webhook is set); retrying"
            : "telegram polling stopped; retrying",
        );
      }
      this.healthy = false;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, backoffMs(restarts, initialMs, maxMs));
      });
      restarts += 1;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    if (this.handle?.isRunning()) await this.handle.stop();
    await this.loop;
    this.loop = undefined;
  }
}
