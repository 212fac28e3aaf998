/**
 * Telegram allows one `getUpdates` poller per bot token: a second concurrent poll gets 409. With
 * several processes on one store, they elect the poller with a lease in the store: whoever holds
 * it runs the polling loop and renews it every third of its TTL; the others try to take it at
 * the same cadence. A holder killed mid-poll loses the lease at its TTL, so another process polls
 * within TTL + one retry interval (≤ 15 s with the defaults) — without the 409 storm of processes
 * fighting over getUpdates. A holder that finds its lease gone (it was frozen past the TTL) stops
 * polling at once. Stopping releases the lease so a survivor takes over immediately.
 */
import type { Logger } from "pino";
import type { ChannelHealth } from "../channel-adapter.js";
import { errorText } from "./telegram-errors.js";
import type { TelegramReceiver } from "./telegram-receiver.js";

/** The lease operations the election needs (the store's coordination provides them). */
export interface PollerLeases {
  acquire(key: string, ttlMs: number): Promise<{ readonly token: string } | undefined>;
  renew(key: string, token: string, ttlMs: number): Promise<boolean>;
  release(key: string, token: string): Promise<unknown>;
}

export interface PollerElectionOptions {
  /** The store key of the lease; one per bot. */
  readonly key: string;
  readonly logger: Logger;
  /** Lease TTL (default 9 s); renewals and attempts run every third of it. */
  readonly ttlMs?: number;
}

const DEFAULT_TTL_MS = 9_000;

/** The lease key for a bot: its numeric id (the token's part before the colon), never the token. */
export function pollerLeaseKey(botToken: string): string {
  return `telegram:poller:${botToken.split(":")[0] ?? "bot"}`;
}

/** Runs `poller` only while this process holds the poller lease (see module comment). */
export class PollerElection implements TelegramReceiver {
  readonly mode = "polling";
  readonly description = "polling, elected among processes";
  private readonly ttlMs: number;
  private token: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  /** The last lease call answered (the store is reachable), so a standby process is healthy. */
  private storeAnswered = false;
  private step: Promise<void> = Promise.resolve();

  constructor(
    private readonly poller: TelegramReceiver,
    private readonly leases: PollerLeases,
    private readonly options: PollerElectionOptions,
  ) {
    this.ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
  }

  /** Take part in the election: poll now if the lease is free, else keep trying. */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.tick();
  }

  /** This process polls. */
  isLeader(): boolean {
    return this.token !== undefined;
  }

  /** The leader's polling works; a standby is ready while the store answers its attempts. */
  health(): ChannelHealth {
    if (this.token !== undefined) return this.poller.health();
    const ready = this.running && this.storeAnswered;
    return { ready, state: this.running ? "standby" : "stopped" };
  }

  port(): number | undefined {
    return undefined;
  }

  /** Stop polling (if leading) and release the lease for the others. */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    await this.step;
    await this.resign("stopping");
  }

  private tick(): void {
    this.step = this.step.then(() => this.round());
    void this.step.then(() => {
      if (this.running) this.timer = setTimeout(() => this.tick(), this.ttlMs / 3);
    });
  }

  private async round(): Promise<void> {
    if (!this.running) return;
    try {
      if (this.token === undefined) await this.campaign();
      else await this.renew();
      this.storeAnswered = true;
    } catch (error) {
      this.storeAnswered = false;
      this.options.logger.warn({ err: errorText(error) }, "telegram poller lease: the store did not answer");
      // A leader that cannot renew may lose the lease to another process: stop polling now.
      if (this.token !== undefined) await this.resign("lease not renewed");
    }
  }

  private async campaign(): Promise<void> {
    const lease = await this.leases.acquire(this.options.key, this.ttlMs);
    if (!lease || !this.running) {
      if (lease) await this.leases.release(this.options.key, lease.token);
      return;
    }
    this.token = lease.token;
    this.options.logger.info({ pid: process.pid }, "telegram poller elected: this process polls");
    await this.poller.start();
  }

  private async renew(): Promise<void> {
    const token = this.token;
    if (token === undefined) return;
    if (await this.leases.renew(this.options.key, token, this.ttlMs)) return;
    this.options.logger.warn("telegram poller lease lost (held past its TTL); polling stopped");
    await this.resign(undefined);
  }

  private async resign(reason: string | undefined): Promise<void> {
    const token = this.token;
    if (token === undefined) return;
    this.token = undefined;
    await this.poller.stop();
    if (reason === undefined) return;
    await this.leases.release(this.options.key, token).catch((error: unknown) => {
      this.options.logger.warn({ err: errorText(error), reason }, "telegram poller lease not released");
    });
  }
}
