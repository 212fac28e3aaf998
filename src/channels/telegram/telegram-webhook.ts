/**
 * Webhook mode: registers the public URL with Telegram (setWebhook with a secret token) and
 * serves it with node:http. grammY's webhook callback checks the
 * `X-Telegram-Bot-Api-Secret-Token` header (401 otherwise). An update is answered once its
 * message is recorded: the handlers check access and queue it in its sender's hand-over lane, and
 * the answer waits for that hand-over (its files read, `service.receive` settled:
 * telegram-hand-over-waits.ts), since Telegram never re-sends an update it got a 200 for — a
 * crash before the record would lose it. An update whose handler failed is logged (as the
 * poller does) and acknowledged all the same; one still running after `answerWithinMs` (9 s by
 * default; a long file still being read) is acknowledged then and left to finish, so Telegram
 * does not re-send it meanwhile, and a later failure of it is logged
 * the same way. When the server stops, it closes every connection: an update still running then
 * and not acknowledged yet gets no answer, so Telegram will deliver it again (to this process once
 * it listens again, or to another behind the same URL); `redelivers` names those, so a stopping
 * channel does not also ask their senders to send them again. The deadline is this module's, not grammY's: on its own timeout grammY leaves an
 * unhandled `task.finally(...)` on the running update, so that update's later failure would be an
 * unhandled rejection, which ends the process (ops/fatal-errors.ts). A request for another path
 * or method gets 404, one whose target cannot be read at all 400 (never a throw in the server's
 * callback).
 *
 * The body is read only after the secret has been checked (grammY checks the header first), and
 * at most `maxBodyBytes` of it (1 MiB by default; an update is a few kilobytes): a larger declared
 * Content-Length, or a stream that runs past the limit, is answered 413 and the connection closed,
 * with no more of it kept. The server listens on `host` (all interfaces when unset).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type Bot, BotError, webhookCallback } from "grammy";
import type { Update } from "grammy/types";
import type { Logger } from "pino";
import type { ChannelHealth } from "../channel-adapter.js";
import { errorText } from "./telegram-errors.js";
import type { TelegramReceiver } from "./telegram-receiver.js";

export interface WebhookOptions {
  /** The public HTTPS URL Telegram posts to (including the path). */
  readonly url: string;
  /** 1–256 characters of A-Z, a-z, 0-9, _ and -. */
  readonly secret: string;
  readonly port: number;
  /** The path this server answers on, e.g. "/telegram/webhook". */
  readonly path: string;
  /** Interface to listen on; all interfaces by default. */
  readonly host?: string;
  /** How long an update may run before it is acknowledged anyway: 9 s by default (tests: less). */
  readonly answerWithinMs?: number;
  /** The largest request body read: 1 MiB by default; a larger one is answered 413. */
  readonly maxBodyBytes?: number;
}

const DEFAULT_ANSWER_WITHIN_MS = 9000;
const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

const SECRET_HEADER = "x-telegram-bot-api-secret-token";

/** A request body past the limit; already answered 413 when this is thrown. */
class BodyTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`request body over ${limit} bytes`);
  }
}

/** Answer 413 and close the connection, so the rest of the body is never read. */
function refuseTooLarge(response: ServerResponse): void {
  if (response.headersSent) return;
  response.writeHead(413, { connection: "close" }).end();
}

/**
 * The update in a request body of at most `limit` bytes, parsed as JSON. Past the limit (declared
 * or counted) it answers 413, stops reading and rejects with BodyTooLarge; chunks after that are
 * neither kept nor counted.
 */
function readUpdate(request: IncomingMessage, response: ServerResponse, limit: number): Promise<Update> {
  return new Promise((resolve, reject) => {
    const declared = Number(request.headers["content-length"]);
    if (Number.isFinite(declared) && declared > limit) {
      refuseTooLarge(response);
      reject(new BodyTooLarge(limit));
      return;
    }
    const chunks: Buffer[] = [];
    let total = 0;
    const onData = (chunk: Buffer) => {
      total += chunk.length;
      if (total <= limit) {
        chunks.push(chunk);
        return;
      }
      request.off("data", onData);
      request.off("end", onEnd);
      chunks.length = 0;
      refuseTooLarge(response);
      reject(new BodyTooLarge(limit));
    };
    const onEnd = () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf-8")) as Update);
      } catch (error) {
        reject(error);
      }
    };
    request.on("data", onData).once("end", onEnd).once("error", reject);
  });
}

/**
 * grammY's node:http adapter with a bounded body: grammY reads `update` only once the secret
 * header matched, so a request without it is refused before any of its body is read. `onRead`
 * gets the update before any handler runs.
 */
function boundedHttpAdapter(limit: number) {
  return (request: IncomingMessage, response: ServerResponse, onRead: (update: Update) => void) => {
    const header = request.headers[SECRET_HEADER];
    return {
      get update() {
        return readUpdate(request, response, limit).then((update) => {
          onRead(update);
          return update;
        });
      },
      header: Array.isArray(header) ? header[0] : header,
      end: () => {
        response.end();
      },
      respond: (json: string) => {
        response.writeHead(200, { "content-type": "application/json" }).end(json);
      },
      unauthorized: () => {
        response.writeHead(401).end("secret token is wrong");
      },
    };
  };
}

/**
 * The path of a request target, or undefined when it cannot be read (`GET //[`): this runs in
 * node:http's request callback, where a throw would be an uncaught exception ending the process.
 */
function requestPath(target: string | undefined): string | undefined {
  try {
    return new URL(target ?? "/", "http://localhost").pathname;
  } catch {
    return undefined;
  }
}

/** The webhook TelegramReceiver: its HTTP server (see module comment). */
export class WebhookReceiver implements TelegramReceiver {
  readonly mode = "webhook";
  readonly description: string;
  private server: Server | undefined;
  /** The ids of the updates being handled, by the response that answers each. */
  private readonly handling = new Map<ServerResponse, number>();
  /** The updates left unanswered when the server last stopped: Telegram delivers them again. */
  private cut: ReadonlySet<number> = new Set();

  constructor(
    private readonly bot: Bot,
    private readonly options: WebhookOptions,
    private readonly allowedUpdates: readonly string[],
    private readonly logger: Logger,
  ) {
    this.description = `webhook ${options.path}`;
  }

  async start(): Promise<void> {
    // No grammY timeout (see module comment): the timer below answers in time instead, and the
    // update's promise has just the one handler here, however late it settles.
    this.cut = new Set();
    const maxBodyBytes = this.options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    const handle = webhookCallback(this.bot, boundedHttpAdapter(maxBodyBytes), {
      secretToken: this.options.secret,
      timeoutMilliseconds: Number.POSITIVE_INFINITY,
    });
    const answerWithinMs = this.options.answerWithinMs ?? DEFAULT_ANSWER_WITHIN_MS;
    const server = createServer((request, response) => {
      const path = requestPath(request.url);
      if (path === undefined) {
        response.writeHead(400).end();
        return;
      }
      if (request.method !== "POST" || path !== this.options.path) {
        response.writeHead(404).end();
        return;
      }
      const timer = setTimeout(() => {
        if (response.headersSent) return;
        this.logger.warn({ answerWithinMs }, "telegram webhook update still running, acknowledged");
        response.writeHead(200).end();
      }, answerWithinMs);
      timer.unref();
      const read = (update: Update) => this.handling.set(response, update.update_id);
      // The callback is async; grammY's type for a custom adapter does not say so.
      Promise.resolve(handle(request, response, read))
        .then(
          () => clearTimeout(timer),
          (error: unknown) => {
            clearTimeout(timer);
            this.failed(error, response);
          },
        )
        .finally(() => this.handling.delete(response));
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.options.port, this.options.host, () => resolve());
    });
    this.server = server;
    await this.bot.api.setWebhook(this.options.url, {
      secret_token: this.options.secret,
      allowed_updates: [...this.allowedUpdates] as never,
    });
    this.logger.info(
      { host: this.options.host ?? "all interfaces", port: this.port(), path: this.options.path },
      "telegram webhook listening",
    );
  }

  /**
   * A handler failed on this update: logged as in polling (bot.catch) and acknowledged, since
   * Telegram re-sends an update until it gets a 2xx, holding back the ones after it. After the
   * timer has answered, only the logging is left. Never throws: it runs as a rejection handler.
   */
  private failed(error: unknown, response: ServerResponse): void {
    if (error instanceof BodyTooLarge) {
      this.logger.warn({ limit: error.limit }, "telegram webhook request body too large, refused");
      refuseTooLarge(response);
      return;
    }
    const handled = error instanceof BotError;
    if (handled)
      Promise.resolve()
        .then(() => this.bot.errorHandler(error))
        .catch(() => undefined);
    else this.logger.error({ err: errorText(error) }, "telegram webhook update failed");
    if (!response.headersSent) response.writeHead(handled ? 200 : 500);
    response.end();
  }

  /** The port actually bound (useful with port 0). */
  port(): number | undefined {
    return (this.server?.address() as AddressInfo | null)?.port;
  }

  /** Ready while the server listens. */
  health(): ChannelHealth {
    const listening = this.server?.listening === true;
    return { ready: listening, state: listening ? "listening" : "stopped" };
  }

  /** Whether Telegram delivers update `updateId` again: it was cut unanswered by the last `stop`. */
  redelivers(updateId: number): boolean {
    return this.cut.has(updateId);
  }

  /** Closes every connection, so the updates not answered yet are Telegram's to send again. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    this.cut = new Set(
      [...this.handling].filter(([response]) => !response.writableFinished).map(([, updateId]) => updateId),
    );
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
