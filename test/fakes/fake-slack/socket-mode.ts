/**
 * The fake Slack's Socket Mode endpoint (a `ws` server on the fake's HTTP port): it sends
 * `hello` on connect, pings at an interval, answers the client's pings, pushes envelopes
 * (events_api / interactive / slash_commands) or raw frames, and records each ack with its time. Tests can make
 * the connection go silent (no pings, no pongs) or ask the client to reconnect (`disconnect`).
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type WebSocket, WebSocketServer } from "ws";
import type { FakeSlackState } from "./state.js";

export type EnvelopeType = "events_api" | "interactive" | "slash_commands";

export interface SocketModeOptions {
  /** How often the server pings each connection (default 5 s). */
  readonly pingIntervalMs?: number;
}

export class FakeSocketMode {
  private readonly server = new WebSocketServer({ noServer: true, autoPong: false });
  private readonly sockets = new Set<WebSocket>();
  private readonly silent = new WeakSet<WebSocket>();
  private readonly pinger: NodeJS.Timeout;
  private readonly ackWaiters = new Map<string, (at: number) => void>();
  /** Connections opened so far (a reconnect adds one). */
  connections = 0;

  constructor(
    private readonly state: FakeSlackState,
    options: SocketModeOptions = {},
  ) {
    this.server.on("connection", (socket) => this.accept(socket));
    this.pinger = setInterval(() => {
      for (const socket of this.sockets)
        if (socket.readyState === socket.OPEN && !this.silent.has(socket)) socket.ping();
    }, options.pingIntervalMs ?? 5_000);
    this.pinger.unref();
  }

  /** Hand an HTTP upgrade on /socket to the websocket server. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.server.handleUpgrade(req, socket, head, (ws) => this.server.emit("connection", ws, req));
  }

  /** Open connections. */
  get open(): number {
    return [...this.sockets].filter((s) => s.readyState === s.OPEN).length;
  }

  private accept(socket: WebSocket): void {
    this.sockets.add(socket);
    this.connections += 1;
    socket.on("ping", (data) => {
      if (!this.silent.has(socket)) socket.pong(data);
    });
    socket.on("message", (data) => this.onMessage(data.toString()));
    socket.on("close", () => {
      this.sockets.delete(socket);
      this.state.changed();
    });
    socket.send(
      JSON.stringify({
        type: "hello",
        num_connections: this.sockets.size,
        debug_info: { host: "fake-slack", approximate_connection_time: 3600 },
        connection_info: { app_id: this.state.appId },
      }),
    );
    this.state.changed();
  }

  private onMessage(raw: string): void {
    let message: { envelope_id?: unknown; payload?: unknown };
    try {
      message = JSON.parse(raw) as typeof message;
    } catch {
      return;
    }
    if (typeof message.envelope_id !== "string") return;
    const record = this.state.acks.get(message.envelope_id);
    if (!record || record.ackedAt !== undefined) return;
    record.ackedAt = Date.now();
    record.ackPayload = message.payload;
    this.ackWaiters.get(message.envelope_id)?.(record.ackedAt - record.sentAt);
    this.ackWaiters.delete(message.envelope_id);
    this.state.changed();
  }

  /** Push an envelope to the first open connection; resolves with the ack latency in ms. */
  push(
    type: EnvelopeType,
    payload: unknown,
    retryAttempt = 0,
  ): { envelopeId: string; acked: Promise<number> } {
    const open = [...this.sockets].filter((s) => s.readyState === s.OPEN);
    const socket = open.find((s) => !this.silent.has(s)) ?? open[0];
    if (!socket) throw new Error("fake slack: no open Socket Mode connection");
    const envelopeId = randomUUID();
    const acked = new Promise<number>((resolve) => this.ackWaiters.set(envelopeId, resolve));
    this.state.acks.set(envelopeId, { envelopeId, type, sentAt: Date.now() });
    socket.send(
      JSON.stringify({
        envelope_id: envelopeId,
        type,
        payload,
        accepts_response_payload: type !== "events_api",
        retry_attempt: retryAttempt,
        retry_reason: retryAttempt > 0 ? "timeout" : "",
      }),
    );
    return { envelopeId, acked };
  }

  /**
   * Send any text as one frame on the first open connection (fuzzing). With `envelopeId`, an ack
   * for it is recorded like a pushed envelope's; resolves with the ack latency.
   */
  sendRaw(frame: string, envelopeId?: string): Promise<number> | undefined {
    const socket = [...this.sockets].find((s) => s.readyState === s.OPEN && !this.silent.has(s));
    if (!socket) throw new Error("fake slack: no open Socket Mode connection");
    let acked: Promise<number> | undefined;
    if (envelopeId !== undefined && !this.state.acks.has(envelopeId)) {
      acked = new Promise<number>((resolve) => this.ackWaiters.set(envelopeId, resolve));
      this.state.acks.set(envelopeId, { envelopeId, type: "raw", sentAt: Date.now() });
    }
    socket.send(frame);
    return acked;
  }

  /** The open connections stop pinging and answering pings: open but deaf (new ones are normal). */
  goSilent(): void {
    for (const socket of this.sockets) this.silent.add(socket);
  }

  /** Ask connected clients to reconnect, as Slack does when it recycles a server. */
  requestReconnect(): void {
    for (const socket of this.sockets)
      socket.send(JSON.stringify({ type: "disconnect", reason: "refresh_requested" }));
  }

  async close(): Promise<void> {
    clearInterval(this.pinger);
    for (const socket of this.sockets) socket.terminate();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
