/**
 * The fake Slack's Socket Mode endpoint (a `ws` server on the fake's HTTP port): it sends
 * `hello` on connect, pings at an interval, answers the client's pings, pushes envelopes
 * (events_api / interactive / slash_commands) or raw frames, and records each ack with its time. Tests can make
 * the connection go silent (no pings, no pongs) or ask the client to reconnect (`disconnect`).
 *
 * Like Slack it holds up to 10 connections per app (one per process under test, each known by the
 * label of its apps.connections.open URL) and delivers each envelope to exactly one of them, in
 * turn; with `redeliverAfterMs`, an envelope not acked in time is sent again, with the next
 * `retry_attempt` and `retry_reason: "timeout"`, to another connection when there is one.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type WebSocket, WebSocketServer } from "ws";
import type { FakeSlackState } from "./state.js";

/** Slack's limit of simultaneous Socket Mode connections per app. */
export const MAX_SOCKET_CONNECTIONS = 10;

export type EnvelopeType = "events_api" | "interactive" | "slash_commands";

export interface SocketModeOptions {
  /** How often the server pings each connection (default 5 s). */
  readonly pingIntervalMs?: number;
  /** Redeliver an envelope not acked within this many ms (off by default; Slack waits ~3 s). */
  readonly redeliverAfterMs?: number;
  /** Deliveries per envelope, the first included, when redelivering (default 4). */
  readonly maxAttempts?: number;
}

/** Where an envelope goes: a connection's label, or (default) the next open connection in turn. */
export interface PushTarget {
  readonly to?: string;
}

interface Connection {
  readonly socket: WebSocket;
  readonly label: string;
}

interface Outgoing {
  readonly type: EnvelopeType;
  readonly payload: unknown;
  readonly firstId: string;
  attempt: number;
  previous: Connection | undefined;
  done: boolean;
}

export class FakeSocketMode {
  private readonly server = new WebSocketServer({ noServer: true, autoPong: false });
  private readonly sockets = new Set<WebSocket>();
  private readonly live: Connection[] = [];
  private readonly silent = new WeakSet<WebSocket>();
  private readonly pinger: NodeJS.Timeout;
  private readonly ackWaiters = new Map<string, (at: number) => void>();
  /** Envelope id of each delivery attempt not acked yet → the envelope it delivers. */
  private readonly outgoing = new Map<string, Outgoing>();
  private readonly redeliveries = new Set<NodeJS.Timeout>();
  private turn = 0;
  /** Connections opened so far (a reconnect adds one). */
  connections = 0;
  /** Connections refused because MAX_SOCKET_CONNECTIONS were open. */
  refused = 0;

  constructor(
    private readonly state: FakeSlackState,
    private readonly options: SocketModeOptions = {},
  ) {
    this.server.on("connection", (socket, req: IncomingMessage) => this.accept(socket, req));
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

  /** Labels of the open connections, in the order they connected (repeated when a label has several). */
  get labels(): string[] {
    return this.openConnections().map((connection) => connection.label);
  }

  private openConnections(): Connection[] {
    return this.live.filter((c) => c.socket.readyState === c.socket.OPEN);
  }

  private accept(socket: WebSocket, req: IncomingMessage | undefined): void {
    if (this.openConnections().length >= MAX_SOCKET_CONNECTIONS) {
      this.refused += 1;
      socket.close(1008, "too many connections");
      return;
    }
    const label = new URL(req?.url ?? "/", "http://fake").searchParams.get("label") ?? "";
    const connection: Connection = { socket, label };
    this.sockets.add(socket);
    this.live.push(connection);
    this.connections += 1;
    socket.on("ping", (data) => {
      if (!this.silent.has(socket)) socket.pong(data);
    });
    socket.on("message", (data) => this.onMessage(data.toString()));
    socket.on("close", () => {
      this.sockets.delete(socket);
      this.live.splice(this.live.indexOf(connection), 1);
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
    record.ackedAt = performance.now();
    record.ackPayload = message.payload;
    const envelope = this.outgoing.get(message.envelope_id);
    if (envelope) envelope.done = true;
    this.outgoing.delete(message.envelope_id);
    const waiterId = envelope?.firstId ?? message.envelope_id;
    const first = this.state.acks.get(waiterId);
    this.ackWaiters.get(waiterId)?.(record.ackedAt - (first?.sentAt ?? record.sentAt));
    this.ackWaiters.delete(waiterId);
    this.state.changed();
  }

  /**
   * Push an envelope to one open connection (the one labelled `target.to`, or the next in turn);
   * resolves with the ack latency in ms, counted from the first delivery when it was redelivered.
   */
  push(
    type: EnvelopeType,
    payload: unknown,
    retryAttempt = 0,
    target: PushTarget = {},
  ): { envelopeId: string; acked: Promise<number> } {
    const connection = this.pick(target.to, undefined);
    if (!connection)
      throw new Error(`fake slack: no open Socket Mode connection${target.to ? ` "${target.to}"` : ""}`);
    const envelopeId = randomUUID();
    const acked = new Promise<number>((resolve) => this.ackWaiters.set(envelopeId, resolve));
    const envelope: Outgoing = {
      type,
      payload,
      firstId: envelopeId,
      attempt: retryAttempt,
      previous: undefined,
      done: false,
    };
    this.deliver(envelope, connection, envelopeId);
    return { envelopeId, acked };
  }

  /** An open connection: labelled `label`, else the next in turn, preferring one that is not `avoid`. */
  private pick(label: string | undefined, avoid: Connection | undefined): Connection | undefined {
    const open = this.openConnections();
    if (label !== undefined) return open.find((c) => c.label === label);
    const audible = open.filter((c) => !this.silent.has(c.socket));
    const candidates = audible.length > 0 ? audible : open;
    const others = candidates.filter((c) => c !== avoid);
    const pool = others.length > 0 ? others : candidates;
    if (pool.length === 0) return undefined;
    this.turn = (this.turn + 1) % pool.length;
    return pool[this.turn];
  }

  private deliver(envelope: Outgoing, connection: Connection, envelopeId: string): void {
    envelope.previous = connection;
    this.outgoing.set(envelopeId, envelope);
    this.state.acks.set(envelopeId, {
      envelopeId,
      type: envelope.type,
      sentAt: performance.now(),
      connection: connection.label,
      attempt: envelope.attempt,
    });
    connection.socket.send(
      JSON.stringify({
        envelope_id: envelopeId,
        type: envelope.type,
        payload: envelope.payload,
        accepts_response_payload: envelope.type !== "events_api",
        retry_attempt: envelope.attempt,
        retry_reason: envelope.attempt > 0 ? "timeout" : "",
      }),
    );
    this.state.changed();
    this.scheduleRedelivery(envelope);
  }

  private scheduleRedelivery(envelope: Outgoing): void {
    const after = this.options.redeliverAfterMs;
    if (after === undefined) return;
    const timer = setTimeout(() => {
      this.redeliveries.delete(timer);
      if (envelope.done || envelope.attempt + 1 >= (this.options.maxAttempts ?? 4)) return;
      const next = this.pick(undefined, envelope.previous);
      if (!next) {
        this.scheduleRedelivery(envelope);
        return;
      }
      envelope.attempt += 1;
      this.deliver(envelope, next, randomUUID());
    }, after);
    this.redeliveries.add(timer);
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
      this.state.acks.set(envelopeId, { envelopeId, type: "raw", sentAt: performance.now() });
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
    for (const timer of this.redeliveries) clearTimeout(timer);
    for (const socket of this.sockets) socket.terminate();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
