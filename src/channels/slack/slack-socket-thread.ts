/**
 * SocketThread: the Socket Mode connection, run in a worker thread of its own so that Slack's
 * envelopes are acknowledged without waiting for the event loop every chat runs on. Slack counts
 * an envelope as delivered only once its ack arrives (it redelivers after ~3 s), and on the main
 * thread an ack waited behind whatever ran there: a garbage collection, a long synchronous render,
 * another thread's turn. The worker holds the SDK's SocketModeClient (apps.connections.open, the
 * WebSocket, pings, reconnects) and little else, so its loop stays free: an `events_api` envelope
 * (whose ack carries nothing) is acknowledged there the moment it arrives, and its frame is passed
 * on as text. Interactive and slash-command envelopes, whose ack may carry an answer, are passed on
 * unacknowledged; the main thread acks them through `ack`. Frames the SDK must read itself
 * (`hello`, `disconnect`) go to it; no other frame reaches it, so a malformed one cannot throw
 * inside the SDK. The worker's program is plain JavaScript (worker threads run outside the
 * TypeScript toolchain, as in core/worker-job.ts); what it posts is checked with zod here.
 *
 * To the main thread the handle looks like the SDK client SocketHealth follows (slack-connection.ts):
 * it emits the client's lifecycle states and answers `start`. A worker that ends unasked (it
 * crashed) counts as disconnected and is started again after a capped, growing pause.
 */
import { EventEmitter } from "node:events";
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { z } from "zod";
import { backoffMs } from "../../core/backoff.js";
import type { SocketClientLike, SocketState } from "./slack-connection.js";

/** How the worker connects. */
export interface SocketThreadOptions {
  /** xapp-… token (apps.connections.open). */
  readonly appToken: string;
  /** Web API base URL with a trailing slash. */
  readonly slackApiUrl: string;
  readonly clientPingTimeoutMs: number;
  readonly serverPingTimeoutMs: number;
  /** The lowest SDK log level worth passing on (the rest is never posted). */
  readonly logLevel: "debug" | "info" | "warn" | "error";
}

/** What the main thread does with what the worker posts. */
export interface SocketThreadHandlers {
  /** A frame that is not `hello` / `disconnect`, as text; `acked` when the worker acked it. */
  frame(text: string, acked: boolean): void;
  /** A frame refused before it could be read (binary, not JSON text). */
  refused(reason: string): void;
  /** An SDK log line, or a failure of the worker's own. */
  log(level: "debug" | "info" | "warn" | "error", text: string): void;
}

/** First and longest pause before starting a crashed worker again. */
const RESTART_FIRST_MS = 1_000;
const RESTART_MAX_MS = 60_000;

/**
 * The worker's program (a CommonJS script). It answers "start" (post "started", or "start-failed"
 * with the error's fields slack-failure.ts reads), "ack" and "stop" (disconnect, then end).
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { SocketModeClient } = require(workerData.socketModeModule);
const RANKS = { debug: 20, info: 30, warn: 40, error: 50 };
const floor = RANKS[workerData.logLevel];
const post = (message) => parentPort.postMessage(message);
const line = (parts) => parts
  .map((part) => (typeof part === "string" ? part : part instanceof Error ? part.message : JSON.stringify(part)))
  .join(" ");
const at = (level) => (...parts) => { if (RANKS[level] >= floor) post({ kind: "log", level, text: line(parts) }); };
const logger = {
  debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error"),
  setLevel() {}, getLevel: () => workerData.logLevel, setName() {},
};
const client = new SocketModeClient({
  appToken: workerData.appToken,
  logger,
  clientOptions: { slackApiUrl: workerData.slackApiUrl },
  clientPingTimeout: workerData.clientPingTimeoutMs,
  serverPingTimeout: workerData.serverPingTimeoutMs,
});
for (const state of ["connecting", "connected", "reconnecting", "disconnecting", "disconnected"])
  client.on(state, () => post({ kind: "state", state }));
const sdkListeners = client.listeners("ws_message");
client.removeAllListeners("ws_message");
const ack = (envelopeId, body) =>
  client.send(envelopeId, body).catch((error) => post({ kind: "log", level: "warn", text: "socket mode ack failed: " + String(error) }));
const envelopeIdOf = (frame) => {
  const id = frame !== null && typeof frame === "object" ? frame.envelope_id : undefined;
  return typeof id === "string" && id.length > 0 && id.length <= 200 ? id : undefined;
};
client.on("ws_message", (data, isBinary) => {
  if (isBinary === true) return post({ kind: "refused", reason: "binary" });
  let text;
  let frame;
  try {
    text = typeof data === "string" ? data : new TextDecoder("utf-8", { fatal: true }).decode(data);
    frame = JSON.parse(text);
  } catch {
    return post({ kind: "refused", reason: "not JSON text" });
  }
  const type = frame !== null && typeof frame === "object" ? frame.type : undefined;
  if (type === "hello" || type === "disconnect") {
    for (const listener of sdkListeners)
      Promise.resolve(listener.call(client, text, false))
        .catch((error) => post({ kind: "log", level: "warn", text: "socket mode frame failed: " + String(error) }));
    return;
  }
  const envelopeId = type === "events_api" ? envelopeIdOf(frame) : undefined;
  if (envelopeId !== undefined) ack(envelopeId, {});
  post({ kind: "frame", text, acked: envelopeId !== undefined });
});
const failure = (error) => {
  const e = error !== null && typeof error === "object" ? error : { message: String(error) };
  const original = e.original !== null && typeof e.original === "object" ? e.original : undefined;
  return {
    message: String(e.message),
    code: typeof e.code === "string" ? e.code : undefined,
    platformError: e.data && typeof e.data.error === "string" ? e.data.error : undefined,
    retryAfter: typeof e.retryAfter === "number" ? e.retryAfter : undefined,
    original: original && { message: String(original.message), code: typeof original.code === "string" ? original.code : undefined },
  };
};
parentPort.on("message", (message) => {
  if (message.kind === "start")
    client.start().then(() => post({ kind: "started" }), (error) => post({ kind: "start-failed", error: failure(error) }));
  else if (message.kind === "ack") ack(message.envelopeId, message.body);
  else if (message.kind === "stop") client.disconnect().finally(() => process.exit(0));
});
`;

const STATES = ["connecting", "connected", "reconnecting", "disconnecting", "disconnected"] as const;
const LEVELS = ["debug", "info", "warn", "error"] as const;

const startFailureSchema = z.object({
  message: z.string(),
  code: z.string().optional(),
  platformError: z.string().optional(),
  retryAfter: z.number().optional(),
  original: z.object({ message: z.string(), code: z.string().optional() }).optional(),
});

/** What the worker posts. */
const postedSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("frame"), text: z.string(), acked: z.boolean() }),
  z.object({ kind: z.literal("refused"), reason: z.string() }),
  z.object({ kind: z.literal("log"), level: z.enum(LEVELS), text: z.string() }),
  z.object({ kind: z.literal("state"), state: z.enum(STATES) }),
  z.object({ kind: z.literal("started") }),
  z.object({ kind: z.literal("start-failed"), error: startFailureSchema }),
]);

/**
 * The worker's start failure as an Error with the fields the SDK's own errors carry (`code`,
 * `data.error`, `retryAfter`, `original.code`), so slack-failure.ts classifies it the same way.
 */
function startError(fields: z.infer<typeof startFailureSchema>): Error {
  const original =
    fields.original && Object.assign(new Error(fields.original.message), { code: fields.original.code });
  return Object.assign(new Error(fields.message), {
    code: fields.code,
    data: fields.platformError === undefined ? undefined : { ok: false, error: fields.platformError },
    retryAfter: fields.retryAfter,
    original,
  });
}

/** The Socket Mode connection in its own thread (see the module comment). */
export class SocketThread extends EventEmitter implements SocketClientLike {
  private worker: Worker | undefined;
  private starts: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  private stopping: Promise<void> | undefined;
  private crashes = 0;
  private restartTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: SocketThreadOptions,
    private readonly handlers: SocketThreadHandlers,
  ) {
    super();
  }

  /** Connect (starting the worker when there is none); resolves once Slack said hello. */
  start(): Promise<void> {
    if (this.stopping) return Promise.reject(new Error("socket mode is stopped"));
    const worker = this.worker ?? this.spawn();
    return new Promise((resolve, reject) => {
      this.starts.push({ resolve, reject });
      worker.postMessage({ kind: "start" });
    });
  }

  /** Acknowledge an envelope the worker passed on unacknowledged, with `body` as its answer. */
  ack(envelopeId: string, body: Readonly<Record<string, unknown>>): void {
    this.worker?.postMessage({ kind: "ack", envelopeId, body });
  }

  /** Disconnect and end the worker; resolves once it has ended. */
  stop(): Promise<void> {
    this.stopping ??= this.end();
    return this.stopping;
  }

  private async end(): Promise<void> {
    clearTimeout(this.restartTimer);
    const worker = this.worker;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
    worker.postMessage({ kind: "stop" });
    await exited;
  }

  private spawn(): Worker {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        ...this.options,
        socketModeModule: createRequire(import.meta.url).resolve("@slack/socket-mode"),
      },
      resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 4 },
    });
    worker.on("message", (message: unknown) => this.received(message));
    worker.on("error", (error) =>
      this.handlers.log("error", `the socket mode thread failed: ${error.message}`),
    );
    worker.on("exit", (code) => this.exited(worker, code));
    this.worker = worker;
    return worker;
  }

  private received(message: unknown): void {
    const posted = postedSchema.safeParse(message);
    if (!posted.success) {
      this.handlers.log("error", "the socket mode thread posted an unexpected message");
      return;
    }
    const m = posted.data;
    if (m.kind === "frame") this.handlers.frame(m.text, m.acked);
    else if (m.kind === "refused") this.handlers.refused(m.reason);
    else if (m.kind === "log") this.handlers.log(m.level, m.text);
    else if (m.kind === "state") {
      if (m.state === "connected") this.crashes = 0;
      this.emit(m.state satisfies SocketState);
    } else if (m.kind === "started") this.starts.shift()?.resolve();
    else this.starts.shift()?.reject(startError(m.error));
  }

  /** The worker ended: asked to (stop), or not (a crash: disconnected, started again later). */
  private exited(worker: Worker, code: number): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    const pending = this.starts.splice(0);
    const crashed = new Error(`the socket mode thread ended (exit ${code})`);
    for (const start of pending) start.reject(crashed);
    if (this.stopping) return;
    this.emit("disconnected");
    const pause = backoffMs(this.crashes++, RESTART_FIRST_MS, RESTART_MAX_MS);
    this.handlers.log("error", `${crashed.message}; starting it again in ${pause} ms`);
    this.restartTimer = setTimeout(() => {
      this.start().catch((error: unknown) =>
        this.handlers.log("error", `socket mode restart failed: ${String(error)}`),
      );
    }, pause);
    this.restartTimer.unref();
  }
}
