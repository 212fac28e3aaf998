/**
 * SocketClient: Coworker's Socket Mode client. It asks apps.connections.open (with the app token)
 * for a WebSocket URL, has the connection's thread (slack-socket-thread.ts) open it, and counts it
 * connected when Slack says hello. When the connection ends without being asked to (Slack asked
 * to reconnect, a ping went unanswered, the network dropped it, the thread died), it connects
 * again after a capped, growing pause, with a fresh URL. A failure socketModeFailure
 * (slack-failure.ts) counts final — a refused app token, or a misconfigured app (wrong token
 * kind, missing scope, invalid arguments) — stops the retries, as the SDK's own client stopped on
 * a refused token: retrying cannot help, and SocketHealth's watchdog tries again much later.
 * Anything else Slack answers is retried. This loop is the only one that retries:
 * apps.connections.open is asked once per attempt (a Web API client's own retries inside it would
 * multiply its tries and stretch its pauses), and the first connection's failure is its caller's
 * to retry.
 *
 * It emits the lifecycle states the SDK's client emits ("connecting", "connected", "reconnecting",
 * "disconnecting", "disconnected"), so SocketHealth (slack-connection.ts) follows it as it
 * followed the SDK's. Frames go to `onFrame`; the first `start` resolves at hello and rejects with
 * apps.connections.open's own error, which slack-failure.ts classifies.
 */
import { EventEmitter } from "node:events";
import type { Logger } from "pino";
import { z } from "zod";
import { backoffMs } from "../../core/backoff.js";
import { createOneTryClient, describeError, retryAfterMs, type WebClient } from "./slack-api.js";
import type { SocketClientLike, SocketState } from "./slack-connection.js";
import { socketModeFailure } from "./slack-failure.js";
import { SocketThread, type SocketThreadTiming, type ThreadMessage } from "./slack-socket-thread.js";

export interface SocketClientOptions extends SocketThreadTiming {
  /** xapp-… token (apps.connections.open). */
  readonly appToken: string;
  /** Web API base URL with a trailing slash. */
  readonly slackApiUrl: string;
  readonly logger: Logger;
}

/** What the client hands on. */
export interface SocketClientHandlers {
  /** A frame that is not `hello` / `disconnect`, as text; `acked` when the thread acked it. */
  frame(text: string, acked: boolean): void;
  /** A frame refused before it could be read (binary, not JSON text). */
  refused(reason: string): void;
}

/** First and longest pause before connecting again. */
const RECONNECT_FIRST_MS = 1_000;
const RECONNECT_MAX_MS = 60_000;
/**
 * A connection that lasted this long counts as a success: the next drop is reconnected after the
 * shortest pause again. One that ended sooner counts as a failure, so a connection that drops
 * right after hello is made again ever more slowly, not once a second for ever.
 */
const STABLE_MS = 60_000;

/** What apps.connections.open must answer: a WebSocket URL. */
const connectionUrlSchema = z
  .string()
  .url()
  .refine((url) => /^wss?:\/\//.test(url), "not a WebSocket URL");

/** Our Socket Mode client (see the module comment). */
export class SocketClient extends EventEmitter implements SocketClientLike {
  private readonly web: WebClient;
  private thread: SocketThread | undefined;
  /** The connection attempt under way: settles at hello, or when it fails. */
  private attempt: Promise<void> | undefined;
  private helloWaiter: { resolve: () => void; reject: (error: Error) => void } | undefined;
  private state: SocketState = "idle";
  private stopped = false;
  private failures = 0;
  /** When Slack last said hello on a connection of this client (0: never yet). */
  private connectedAt = 0;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: SocketClientOptions,
    private readonly handlers: SocketClientHandlers,
  ) {
    super();
    this.web = createOneTryClient({
      token: options.appToken,
      slackApiUrl: options.slackApiUrl,
      logger: options.logger,
    });
  }

  /**
   * Connect now (joining an attempt under way); resolves once Slack said hello, rejects with why
   * not. Once the client has been connected, a failed attempt — the loop's own, or SocketHealth's
   * watchdog's — also goes to `failed`, which decides what comes next; the first connection's
   * failure is its caller's to handle (the channel's start).
   */
  start(): Promise<void> {
    if (this.stopped) return Promise.reject(new Error("socket mode is stopped"));
    if (this.state === "connected") return Promise.resolve();
    if (!this.attempt) {
      const attempt = this.connect().finally(() => {
        this.attempt = undefined;
      });
      if (this.connectedAt > 0) attempt.catch((error: unknown) => this.failed(error));
      this.attempt = attempt;
    }
    return this.attempt;
  }

  /** Acknowledge an envelope the thread passed on unacknowledged, with `body` as its answer. */
  ack(envelopeId: string, body: Readonly<Record<string, unknown>>): void {
    this.thread?.ack(envelopeId, body);
  }

  /** Close the connection and end its thread; no reconnect follows. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.enter("disconnecting");
    const thread = this.thread;
    this.thread = undefined;
    this.helloWaiter?.reject(new Error("socket mode stopped"));
    await thread?.stop();
    this.enter("disconnected");
  }

  /** Move to `state`, telling listeners (SocketHealth) of a change. */
  private enter(state: SocketState): void {
    if (state === this.state) return;
    this.state = state;
    this.emit(state);
  }

  private async connect(): Promise<void> {
    this.enter(this.connectedAt > 0 ? "reconnecting" : "connecting");
    const opened = await this.web.apps.connections.open({});
    const url = connectionUrlSchema.safeParse(opened.url);
    if (!url.success) throw new Error("apps.connections.open answered without a WebSocket URL");
    if (this.stopped) throw new Error("socket mode stopped");
    const thread = this.thread ?? this.startThread();
    await new Promise<void>((resolve, reject) => {
      this.helloWaiter = { resolve, reject };
      thread.connect(url.data);
    });
  }

  private startThread(): SocketThread {
    const { clientPingTimeoutMs, serverPingTimeoutMs, mainSilenceMs } = this.options;
    const thread = new SocketThread({ clientPingTimeoutMs, serverPingTimeoutMs, mainSilenceMs });
    thread.on("message", (message: ThreadMessage) => this.received(message));
    thread.on("exit", (code: number) => {
      if (this.thread !== thread) return;
      this.thread = undefined;
      this.lost(`the socket mode thread ended (exit ${code})`);
    });
    this.thread = thread;
    return thread;
  }

  private received(message: ThreadMessage): void {
    switch (message.kind) {
      case "frame":
        // After stop, only what the thread acked is handed on (Slack will not send it again).
        if (!this.stopped || message.acked) this.handlers.frame(message.text, message.acked);
        break;
      case "refused":
        if (!this.stopped) this.handlers.refused(message.reason);
        break;
      case "log":
        this.options.logger[message.level]({ component: "slack-socket" }, message.text);
        break;
      case "hello":
        if (this.stopped) break;
        clearTimeout(this.retryTimer);
        this.retryTimer = undefined;
        this.connectedAt = Date.now();
        this.helloWaiter?.resolve();
        this.helloWaiter = undefined;
        this.enter("connected");
        break;
      case "closed":
        this.lost(message.reason);
        break;
    }
  }

  /**
   * The connection ended unasked. An attempt still waiting for hello fails (its caller decides
   * what next) and its thread ends with it, so an idle worker never holds the process open; a
   * connection that was up is made again.
   */
  private lost(reason: string): void {
    if (this.stopped) return;
    const waiting = this.helloWaiter;
    this.helloWaiter = undefined;
    if (waiting) {
      const thread = this.thread;
      this.thread = undefined;
      void thread?.stop();
      waiting.reject(new Error(`socket mode connection ended before Slack said hello: ${reason}`));
      return;
    }
    if (this.state !== "connected") return;
    this.failures = Date.now() - this.connectedAt >= STABLE_MS ? 0 : this.failures + 1;
    this.options.logger.info({ component: "slack-socket", reason }, "slack socket mode connection ended");
    this.reconnectLater();
  }

  /** An attempt after the first connection failed: try again after a pause, or give up. */
  private failed(error: unknown): void {
    if (this.stopped) return;
    this.failures += 1;
    this.options.logger.warn(
      { component: "slack-socket", err: describeError(error) },
      "slack socket mode could not connect again",
    );
    if (socketModeFailure(error).retryable) this.reconnectLater(retryAfterMs(error));
    else this.giveUp();
  }

  /** Retrying cannot help: end the thread and wait for SocketHealth's watchdog (or a stop). */
  private giveUp(): void {
    const thread = this.thread;
    this.thread = undefined;
    void thread?.stop();
    this.enter("disconnected");
  }

  /** Connect again after a pause (at least what a rate limit asked for), unless retrying cannot help. */
  private reconnectLater(askedMs = 0): void {
    if (this.stopped || this.attempt || this.retryTimer) return;
    const pause = Math.max(askedMs, backoffMs(this.failures, RECONNECT_FIRST_MS, RECONNECT_MAX_MS));
    this.enter("reconnecting");
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      // A failure is handled by `failed`, through start.
      this.start().catch(() => undefined);
    }, pause);
    this.retryTimer.unref();
  }
}
