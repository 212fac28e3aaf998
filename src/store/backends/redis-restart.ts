/**
 * Dropping a node-redis (@redis/client 5.x) connection and opening a new one, for the watches that
 * find a link gone silent (the command connections' watchRedisLink, the subscriber's
 * SubscriberWatch). Done naively (`destroy(); connect()`) it can leave node-redis running two
 * connect attempts side by side, each ending with a live socket of its own (one a stray that Redis
 * keeps counting): `destroy()` does not end an attempt under way, it only marks the client closed,
 * and the attempt checks that mark later — after a handshake it was in fails, or after its retry
 * delay — by which time `connect()` has marked the client open again, so the old attempt goes on.
 * Each step below is there to keep that from happening.
 */
import type { ErrorSink } from "./backend.js";

/** The part of a node-redis client a restart uses. */
export interface RestartableClient {
  readonly isOpen: boolean;
  readonly isReady: boolean;
  on(event: "connect" | "ready" | "reconnecting" | "error", listener: () => void): unknown;
  destroy(): void;
  connect(): Promise<unknown>;
}

/**
 * What the connection is doing, as its events tell: `ready`; `handshake` (a socket is open and
 * the handshake, re-subscribing included, is under way); `opening` (the TCP socket is being opened,
 * not yet the client's); `waiting` (an attempt failed, the next one starts after the retry delay).
 */
type Phase = "ready" | "handshake" | "opening" | "waiting";

/**
 * The one restart routine of a client. The client's reconnect strategy must give up and its error
 * listener stay quiet while `dropping` is true (newRedisClient wires both).
 */
export class RedisRestart {
  private phase: Phase = "opening";
  private drop = false;
  private stopped = false;

  constructor(
    private readonly client: RestartableClient,
    private readonly onError: ErrorSink,
  ) {
    client.on("connect", () => {
      this.phase = "handshake";
    });
    client.on("ready", () => {
      this.phase = "ready";
    });
    client.on("reconnecting", () => {
      this.phase = "opening";
    });
    // A failed attempt (or a ready socket that failed) says so before its retry delay; the
    // attempt's socket is gone, and the next 'reconnecting' or 'connect' says what follows.
    client.on("error", () => {
      if (!client.isReady) this.phase = "waiting";
    });
  }

  /** True from the moment a connection is dropped until the new one is asked for. */
  get dropping(): boolean {
    return this.drop;
  }

  /**
   * Drop the connection and open a new one; returns false (doing nothing) when there is no socket
   * to drop — the client closed, its TCP socket still opening, or waiting to retry — as node-redis
   * is then between attempts of its own that it ends by itself (a connect timeout, the next try).
   */
  restart(): boolean {
    if (this.stopped || this.drop) return false;
    // Only a connection with a socket: a ready one has no attempt under way, and one in its
    // handshake ends its attempt within the microtasks that follow destroy() (below). An attempt
    // still opening its socket, or sleeping before a retry, would go on past a new connect().
    if (!this.client.isOpen || !(this.client.isReady || this.phase === "handshake")) return false;
    // While set, the reconnect strategy gives up: the attempt whose handshake destroy() fails asks
    // it whether to try again, and must stop rather than loop on beside the new one. Its errors
    // (the handshake's, a socket gone) are the drop's own, not reported.
    this.drop = true;
    this.phase = "opening";
    // Fails every call waiting on the old socket at once and marks the client closed.
    this.client.destroy();
    // The old attempt ends within the microtasks destroy() set off; the new one starts after them,
    // on the next turn of the event loop, and only if nothing opened the client meanwhile (a
    // second connect() on an open client would throw, or worse, run beside it).
    setImmediate(() => {
      this.drop = false;
      if (this.stopped || this.client.isOpen) return;
      // Rejected when a later drop ends this attempt: that is the drop's, not reported.
      this.client.connect().catch((error: unknown) => {
        if (!this.drop) this.onError(error);
      });
    });
    return true;
  }

  /** No new connection is opened after this (call before closing the client). */
  stop(): void {
    this.stopped = true;
  }
}
