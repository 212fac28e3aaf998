/**
 * Webhook mode: registers the public URL with Telegram (setWebhook with a secret token) and
 * serves it with node:http. grammY's webhook callback checks the
 * `X-Telegram-Bot-Api-Secret-Token` header (401 otherwise); handlers only record, so the answer
 * goes back fast and Telegram does not re-send. An update whose handler failed is logged (as the
 * poller does) and acknowledged all the same; one still running after `answerWithinMs` (9 s by
 * default) is acknowledged then and left to finish, and a later failure of it is logged
 * the same way. The deadline is this module's, not grammY's: on its own timeout grammY leaves an
 * unhandled `task.finally(...)` on the running update, so that update's later failure would be an
 * unhandled rejection, which ends the process (ops/fatal-errors.ts). A request for another path
 * or method gets 404, one whose target cannot be read at all 400 (never a throw in the server's
 * callback).
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type Bot, BotError, webhookCallback } from "grammy";
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
}

const DEFAULT_ANSWER_WITHIN_MS = 9000;

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
    const handle = webhookCallback(this.bot, "http", {
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
      handle(request, response).then(
        () => clearTimeout(timer),
        (error: unknown) => {
          clearTimeout(timer);
          this.failed(error, response);
        },
      );
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
    this.logger.info({ port: this.port(), path: this.options.path }, "telegram webhook listening");
  }

  /**
   * A handler failed on this update: logged as in polling (bot.catch) and acknowledged, since
   * Telegram re-sends an update until it gets a 2xx, holding back the ones after it. After the
   * timer has answered, only the logging is left. Never throws: it runs as a rejection handler.
   */
  private failed(error: unknown, response: ServerResponse): void {
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

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
