/**
 * SocketHealth: the Socket Mode connection's state as the readiness probe sees it. It follows
 * the Socket Mode client's lifecycle events (connecting, connected, reconnecting, disconnecting,
 * disconnected: slack-socket-client.ts), logs every change, and answers `isReady`. A silent
 * connection (no pongs, no server pings) is detected by the client itself through its ping
 * timeouts, which close the socket and reconnect. A watchdog covers the client's own blind spot:
 * a reconnect loop that gave up (a refused token ends it) leaves the client quiet and
 * disconnected, so after `watchdogMs` without progress the watchdog starts it again.
 */
import type { Logger } from "pino";
import { describeError } from "./slack-api.js";

export type SocketState =
  | "idle"
  | "connecting"
  | "connected"
  | "reconnecting"
  | "disconnecting"
  | "disconnected";

const STATES: readonly SocketState[] = [
  "connecting",
  "connected",
  "reconnecting",
  "disconnecting",
  "disconnected",
];

/** The part of the Socket Mode client this needs. */
export interface SocketClientLike {
  on(event: string, listener: () => void): unknown;
  off(event: string, listener: () => void): unknown;
  start(): Promise<unknown>;
}

export class SocketHealth {
  private state: SocketState = "idle";
  private changedAt = Date.now();
  private stopped = false;
  private restarting = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners = new Map<SocketState, () => void>();

  constructor(
    private readonly client: SocketClientLike,
    private readonly logger: Logger,
    private readonly watchdogMs: number,
  ) {
    for (const state of STATES) {
      const listener = () => this.transition(state);
      this.listeners.set(state, listener);
      client.on(state, listener);
    }
  }

  /** Begin watching (after the first connect was attempted). */
  watch(): void {
    this.stopped = false;
    this.timer = setInterval(() => this.check(), Math.max(50, Math.floor(this.watchdogMs / 2)));
    this.timer.unref();
  }

  /** Stop watching (shutdown): no more restarts. */
  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    for (const [state, listener] of this.listeners) this.client.off(state, listener);
  }

  isReady(): boolean {
    return this.state === "connected";
  }

  current(): SocketState {
    return this.state;
  }

  private transition(state: SocketState): void {
    if (state === this.state) return;
    const previous = this.state;
    this.state = state;
    this.changedAt = Date.now();
    if (this.stopped) return;
    const fields = { from: previous, to: state };
    if (state === "connected") this.logger.info(fields, "slack socket mode connected");
    else if (state === "reconnecting" || state === "disconnected")
      this.logger.warn(fields, "slack socket mode connection lost");
    else this.logger.debug(fields, "slack socket mode state");
  }

  private check(): void {
    if (this.stopped || this.restarting || this.state === "connected") return;
    if (Date.now() - this.changedAt < this.watchdogMs) return;
    this.restarting = true;
    this.changedAt = Date.now();
    this.logger.warn({ state: this.state }, "slack socket mode made no progress; starting it again");
    this.client
      .start()
      .catch((error: unknown) =>
        this.logger.error({ err: describeError(error) }, "slack socket mode restart failed"),
      )
      .finally(() => {
        this.restarting = false;
      });
  }
}
