/**
 * The watch on the coordination's pub/sub subscriber connection. A link that goes silent without
 * closing (no RST: a stalled network, a frozen host) would leave the subscriber waiting for TCP to
 * give up, minutes, while every message published to this process meanwhile is lost (Redis still
 * counts the subscription, so publishers think it was delivered).
 *
 * The process subscribes to a heartbeat channel of its own and publishes to it through the command
 * connection every WATCH_INTERVAL_MS. When nothing has been heard for REPLY_TIMEOUT_MS although
 * Redis took a heartbeat at least a tick ago (the command connection works, so the fault is the
 * subscriber's), the subscriber connection is dropped and opened again; node-redis subscribes a
 * reopened connection to every channel it held (its listeners outlive the socket). A silent
 * command connection is its own watch's (watchRedisLink), not a reason to drop the subscriber.
 * Messages published while the link was silent are lost, as with a dropped connection; once it is
 * dropped, Redis counts no subscriber here until the new connection has subscribed, so a publisher
 * sees "nobody listened" meanwhile (TurnControls.send falls back as for a dead process).
 *
 * The drop is the subscriber client's restart routine (backends/redis-restart.ts), as for the
 * command connections: done only while the connection has a socket (ready, or its handshake and
 * re-subscribe under way), so two connect attempts never run side by side; one still opening its
 * TCP socket, or waiting to retry, is left to node-redis (tried again on the next tick).
 */
import { randomUUID } from "node:crypto";
import { REPLY_TIMEOUT_MS } from "../backends/backend.js";
import type { RedisClient, RedisConnection } from "../backends/redis.js";

/** How often a heartbeat is published (and the watch looks at what it heard). */
const HEARTBEAT_INTERVAL_MS = 1_000;

/** The heartbeat channel's name after the coordination's head: one per process. */
export function heartbeatChannel(head: string): string {
  return `${head}heartbeat:${randomUUID()}`;
}

export class SubscriberWatch {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Heartbeats are numbered; the highest heard so far. */
  private sent = 0;
  private heard = 0;
  /** When a heartbeat was last heard, or the subscriber last reopened (its grace starts then). */
  private lastHeardAt = Date.now();
  /** When the earliest heartbeat Redis took since lastHeardAt was sent (undefined: none taken). */
  private takenSince: number | undefined;
  /** Whether the warning for this outage was given (cleared when a heartbeat is heard again). */
  private warned = false;

  constructor(
    private readonly client: RedisClient,
    private readonly subscriber: RedisConnection,
    private readonly channel: string,
    private readonly onWarn: (message: string) => void,
  ) {}

  /** Subscribe to the heartbeat channel and start publishing to it. */
  async start(): Promise<void> {
    await this.subscriber.client.subscribe(this.channel, (message) => this.hear(Number(message)));
    this.lastHeardAt = Date.now();
    this.timer = setInterval(() => this.tick(), HEARTBEAT_INTERVAL_MS);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    this.subscriber.restart.stop();
    clearInterval(this.timer);
  }

  private hear(n: number): void {
    if (!(n > this.heard)) return;
    this.heard = n;
    this.lastHeardAt = Date.now();
    this.takenSince = undefined;
    this.warned = false;
  }

  private tick(): void {
    if (this.stopped || this.subscriber.restart.dropping) return;
    const now = Date.now();
    if (
      now - this.lastHeardAt >= REPLY_TIMEOUT_MS &&
      this.takenSince !== undefined &&
      now - this.takenSince >= HEARTBEAT_INTERVAL_MS
    ) {
      this.reopen(now);
      return;
    }
    if (!this.client.isReady) return;
    const n = ++this.sent;
    const sentAt = now;
    this.client.publish(this.channel, String(n)).then(
      () => {
        // Taken by Redis after the subscriber was last heard from: had the link worked, it would be heard.
        if (sentAt >= this.lastHeardAt && n > this.heard) this.takenSince ??= sentAt;
      },
      // The command connection's own watch reports and handles its failures.
      () => undefined,
    );
  }

  private reopen(now: number): void {
    // Dropped and reopened only while it has a socket (module comment); else tried on the next tick.
    if (!this.subscriber.restart.restart()) return;
    if (!this.warned) {
      this.warned = true;
      this.onWarn(
        `Redis pub/sub connection heard nothing for ${Math.round((now - this.lastHeardAt) / 1000)} s ` +
          "while the command connection works: reopening it (messages sent to this process meanwhile are lost)",
      );
    }
    this.lastHeardAt = now;
    this.takenSince = undefined;
  }
}
