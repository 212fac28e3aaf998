/**
 * SocketThread: the Socket Mode WebSocket, held by a worker thread of its own so that Slack's
 * envelopes are acknowledged without waiting for the event loop every chat runs on. Slack counts
 * an envelope as delivered only once its ack arrives (it redelivers after ~3 s), and on the main
 * thread an ack waited behind whatever ran there: a garbage collection, a long synchronous render,
 * another thread's turn. The worker's loop has nothing else to do: an `events_api` envelope
 * (whose ack carries nothing) is acknowledged the moment it arrives and its frame passed on as
 * text; interactive and slash-command envelopes, whose ack may carry an answer, are passed on
 * unacknowledged, for the main thread to ack through `ack` once their handler has. The worker also
 * keeps the connection honest as the SDK's client does: it pings Slack and drops a connection
 * whose pong is late, and drops one whose server pings stop.
 *
 * While the main thread gives no sign of life (a heartbeat each second) for a while (ten seconds by
 * default), the worker acks nothing: the main thread acks each event when it reads it, and Slack
 * redelivers the rest.
 *
 * A main thread that beats but reads slower than events arrive (a burst of thousands, a long
 * synchronous task between beats) would let acked frames pile up in the port without bound: memory
 * that grows, and events Slack will not send again, lost if the process dies. So the worker counts
 * the messages it posts, the main thread says with each beat how many it has taken in (and beats
 * after each batch it takes), and while MAX_UNTAKEN are waiting the worker neither acks nor posts
 * an event: Slack redelivers it later, which is Slack's own back-pressure.
 *
 * The worker holds only the `ws` socket (a few MB; the SDK's client would load the whole Web API
 * client into it a second time); finding the URL and connecting again is slack-socket-client.ts's
 * work on the main thread. Its program is plain JavaScript (worker threads run outside the
 * TypeScript toolchain, as in core/worker-job.ts); what it posts is checked with zod here.
 */
import { EventEmitter } from "node:events";
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { z } from "zod";
import { SLACK_BODY_LIMIT } from "./slack-intake-guard.js";

/** How the worker watches its connection. */
export interface SocketThreadTiming {
  /** A ping goes to Slack this often; its pong must be back before the next one. */
  readonly clientPingTimeoutMs: number;
  /**
   * Slack pings every few seconds: none for this long drops the connection. A new connection
   * gets as long for its upgrade and for Slack's hello.
   */
  readonly serverPingTimeoutMs: number;
  /**
   * Without a sign of life from the main thread for this long, it is stuck: the worker stops
   * acking events, so Slack redelivers them (to another process, or here once the main thread
   * runs again) instead of counting as delivered what may never be read.
   */
  readonly mainSilenceMs: number;
}

/** The main thread tells the worker it is alive this often (a quarter of the silence allowed, at most). */
const HEARTBEAT_MS = 1_000;

/**
 * At most this many messages wait in the port for the main thread. An event frame is a few KB
 * (Slack's are mostly 1–5 KB; the largest allowed is SLACK_BODY_LIMIT), so this holds a few MB in
 * the usual case; handing one to Bolt takes well under a millisecond, so a thousand waiting is a
 * real backlog, not a burst the next turn of the loop clears. It bounds the acked events waiting in
 * the port, not those Bolt has taken and is still handling (their handlers' own work decides how
 * long that takes). Far above Slack's sustained rate for one app (30,000 events an hour per
 * workspace, under ten a second), so only a stalled or swamped main thread reaches it.
 */
const MAX_UNTAKEN = 1_000;
/**
 * Held back, the worker takes events again once fewer than this are waiting: half drained, so a
 * main thread just keeping up does not switch the hold on and off (and log it) every few frames.
 */
const RESUME_BELOW = MAX_UNTAKEN / 2;

/**
 * The worker's program (a CommonJS script). Messages in: "connect" (a URL), "ack", "beat" (the main
 * thread is alive, with how many messages it has taken in), "stop" (close, then end). Messages
 * out: "hello" (Slack greeted the connection), "closed" (it ended, with why: never the URL, whose
 * ticket is a credential), "frame", "refused", "log".
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const WebSocket = require(workerData.wsModule);
let posted = 0;
let taken = 0;
let holding = false;
const post = (message) => {
  posted += 1;
  parentPort.postMessage(message);
};
let socket;
let lastBeat = performance.now();
const mainAlive = () => performance.now() - lastBeat <= workerData.mainSilenceMs;
// Whether events wait for the main thread to catch up (see MAX_UNTAKEN); says so when that changes.
const holdingBack = () => {
  const waiting = posted - taken;
  const hold = waiting >= (holding ? workerData.resumeBelow : workerData.maxUntaken);
  if (hold === holding) return holding;
  holding = hold;
  post(hold
    ? { kind: "log", level: "warn", text: "socket mode: " + waiting + " messages wait for the main thread; events are left unacknowledged for Slack to redeliver until it catches up" }
    : { kind: "log", level: "info", text: "socket mode: the main thread caught up (" + waiting + " messages wait); events are acknowledged again" });
  return holding;
};
const envelopeIdOf = (frame) => {
  const id = frame !== null && typeof frame === "object" ? frame.envelope_id : undefined;
  return typeof id === "string" && id.length > 0 && id.length <= 200 ? id : undefined;
};
const ack = (ws, envelopeId, payload) => {
  if (ws.readyState !== WebSocket.OPEN) {
    post({ kind: "log", level: "warn", text: "socket mode ack not sent: the connection is closed" });
    return false;
  }
  ws.send(JSON.stringify({ envelope_id: envelopeId, payload }), (error) => {
    if (error) post({ kind: "log", level: "warn", text: "socket mode ack failed: " + String(error) });
  });
  return true;
};
function onFrame(ws, data, isBinary, drop, greeted) {
  // A frame still arriving on a connection being closed or replaced is left to Slack to redeliver.
  if (socket !== ws || ws.readyState !== WebSocket.OPEN) return;
  if (isBinary) return post({ kind: "refused", reason: "binary" });
  let text;
  let frame;
  try {
    // ws has checked a text frame's UTF-8 already (it closes the connection on a bad one).
    text = data.toString();
    frame = JSON.parse(text);
  } catch {
    return post({ kind: "refused", reason: "not JSON text" });
  }
  const type = frame !== null && typeof frame === "object" ? frame.type : undefined;
  if (type === "hello") {
    greeted();
    return post({ kind: "hello" });
  }
  if (type === "disconnect") return drop("Slack asked to reconnect (" + String(frame.reason) + ")");
  // Neither acked nor posted: Slack redelivers it, when the main thread has caught up or elsewhere.
  if (type === "events_api" && holdingBack()) return;
  const envelopeId = type === "events_api" && mainAlive() ? envelopeIdOf(frame) : undefined;
  post({ kind: "frame", text, acked: envelopeId !== undefined && ack(ws, envelopeId, {}) });
}
function connect(url) {
  let ws;
  try {
    // No permessage-deflate (as the SDK's client): frames are small, and each zlib context costs memory.
    ws = new WebSocket(url, {
      maxPayload: workerData.maxFrameBytes,
      handshakeTimeout: workerData.serverPingTimeoutMs,
      perMessageDeflate: false,
    });
  } catch {
    return post({ kind: "closed", reason: "the connection URL was not usable" });
  }
  socket = ws;
  let why;
  let pongDue = false;
  let clientPing;
  let serverPing;
  const drop = (reason) => {
    why = reason;
    ws.terminate();
  };
  const hello = setTimeout(() => drop("no hello from Slack in " + workerData.serverPingTimeoutMs + " ms"), workerData.serverPingTimeoutMs);
  const greeted = () => clearTimeout(hello);
  const awaitServerPing = () => {
    clearTimeout(serverPing);
    serverPing = setTimeout(() => drop("no ping from Slack in " + workerData.serverPingTimeoutMs + " ms"), workerData.serverPingTimeoutMs);
  };
  ws.on("open", () => {
    awaitServerPing();
    clientPing = setInterval(() => {
      if (pongDue) return drop("no pong from Slack in " + workerData.clientPingTimeoutMs + " ms");
      pongDue = true;
      ws.ping();
    }, workerData.clientPingTimeoutMs);
  });
  ws.on("pong", () => { pongDue = false; });
  ws.on("ping", awaitServerPing);
  ws.on("message", (data, isBinary) => onFrame(ws, data, isBinary, drop, greeted));
  ws.on("error", (error) => { why = why || String(error && error.code || error && error.message || error); });
  ws.on("close", (code, reason) => {
    clearTimeout(hello);
    clearInterval(clientPing);
    clearTimeout(serverPing);
    if (socket !== ws) return;
    socket = undefined;
    const told = String(reason).slice(0, 200);
    post({ kind: "closed", reason: why || "closed by Slack (" + code + (told ? ": " + told : "") + ")" });
  });
}
parentPort.on("message", (message) => {
  if (message.kind === "connect") {
    const replaced = socket;
    socket = undefined;
    if (replaced) replaced.terminate();
    connect(message.url);
  } else if (message.kind === "beat") {
    lastBeat = performance.now();
    taken = message.taken;
  } else if (message.kind === "ack") {
    if (socket) ack(socket, message.envelopeId, message.body);
  } else if (message.kind === "stop") {
    if (!socket) process.exit(0);
    socket.on("close", () => process.exit(0));
    socket.close(1000);
    setTimeout(() => process.exit(0), 1000).unref();
  }
});
`;

const LEVELS = ["debug", "info", "warn", "error"] as const;

/** What the worker posts. */
const postedSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("hello") }),
  z.object({ kind: z.literal("closed"), reason: z.string() }),
  z.object({ kind: z.literal("frame"), text: z.string(), acked: z.boolean() }),
  z.object({ kind: z.literal("refused"), reason: z.string() }),
  z.object({ kind: z.literal("log"), level: z.enum(LEVELS), text: z.string() }),
]);

/** One message from the worker, checked. */
export type ThreadMessage = z.infer<typeof postedSchema>;

/**
 * The worker and its socket (see the module comment). Emits each checked ThreadMessage as
 * "message", and "exit" (with the exit code) when the worker ends, asked to or not.
 */
export class SocketThread extends EventEmitter {
  private readonly worker: Worker;
  private readonly heartbeat: NodeJS.Timeout;
  /** Messages from the worker handed on so far (see MAX_UNTAKEN). */
  private taken = 0;
  /** A beat is due once the messages that arrived in this turn of the loop are handed on. */
  private beatDue = false;

  constructor(timing: SocketThreadTiming) {
    super();
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        ...timing,
        maxFrameBytes: SLACK_BODY_LIMIT,
        maxUntaken: MAX_UNTAKEN,
        resumeBelow: RESUME_BELOW,
        wsModule: createRequire(import.meta.url).resolve("ws"),
      },
      resourceLimits: { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 2 },
    });
    this.worker.on("message", (message: unknown) => {
      const posted = postedSchema.safeParse(message);
      this.taken += 1;
      this.emit(
        "message",
        posted.success
          ? posted.data
          : { kind: "log", level: "error", text: "the socket mode thread posted an unexpected message" },
      );
      if (this.beatDue) return;
      this.beatDue = true;
      setImmediate(() => {
        this.beatDue = false;
        this.beat();
      });
    });
    this.worker.on("error", (error) =>
      this.emit("message", {
        kind: "log",
        level: "error",
        text: `the socket mode thread failed: ${error.message}`,
      }),
    );
    this.worker.on("exit", (code) => {
      clearInterval(this.heartbeat);
      this.emit("exit", code);
    });
    this.heartbeat = setInterval(() => this.beat(), Math.min(HEARTBEAT_MS, timing.mainSilenceMs / 4));
    this.heartbeat.unref();
  }

  /** Open a connection to `url` (one from apps.connections.open), dropping any open one. */
  connect(url: string): void {
    this.worker.postMessage({ kind: "connect", url });
  }

  /** Acknowledge an envelope the worker passed on unacknowledged, with `body` as its answer. */
  ack(envelopeId: string, body: Readonly<Record<string, unknown>>): void {
    this.worker.postMessage({ kind: "ack", envelopeId, body });
  }

  /** Tell the worker the main thread is alive, and how many of its messages it has taken in. */
  private beat(): void {
    this.worker.postMessage({ kind: "beat", taken: this.taken });
  }

  /** Close the connection and end the worker; resolves once it has ended. */
  async stop(): Promise<void> {
    const exited = new Promise<void>((resolve) => this.worker.once("exit", () => resolve()));
    this.worker.postMessage({ kind: "stop" });
    await exited;
  }
}
