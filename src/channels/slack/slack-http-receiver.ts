/**
 * The HTTP Events API: Slack posts events, actions and commands to a public URL; Bolt's
 * HTTPReceiver verifies their signatures and a guard sits in front of its request listener
 * (slack-intake-guard.ts). The server is public, so a stranger's connection is bounded: short
 * header and request timeouts, a cap on open connections, and close() cuts every open connection
 * (an unfinished request would otherwise hold up the shutdown). Ready means the server listens.
 */
import { type App, HTTPReceiver, type Receiver } from "@slack/bolt";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import type { ChannelHealth } from "../channel-adapter.js";
import { listenFailure } from "./slack-failure.js";
import { guardHttpReceiver, SLACK_BODY_LIMIT } from "./slack-intake-guard.js";
import { sdkLogger } from "./slack-logger.js";
import type { ReceiverIntake, SlackReceiver } from "./slack-receiver.js";

/** Slack sends small bodies and expects an answer within 3 s; anything slower is not Slack. */
const REQUEST_TIMEOUT_MS = 10_000;
const HEADERS_TIMEOUT_MS = 5_000;
/** How often Node looks for requests past those timeouts (its default is 30 s). */
const TIMEOUT_CHECK_MS = 1_000;
/** Open connections at most; Slack itself needs a handful (a load balancer keeps a few alive). */
export const MAX_CONNECTIONS = 256;

export interface HttpReceiverOptions {
  readonly signingSecret: string;
  readonly port: number;
  /** The path Slack posts to, e.g. "/slack/events". */
  readonly path: string;
  /** Interface to listen on; all interfaces by default. */
  readonly host?: string;
  readonly logger: Logger;
}

/** The HTTP Events API SlackReceiver (see the module comment). */
export class HttpReceiver implements SlackReceiver {
  readonly description: string;
  private server: Server | undefined;

  constructor(private readonly options: HttpReceiverOptions) {
    this.description = `http :${options.port}${options.path}`;
  }

  open(intake: ReceiverIntake): Receiver {
    const o = this.options;
    const receiver = new HTTPReceiver({
      signingSecret: o.signingSecret,
      endpoints: o.path,
      logger: sdkLogger(o.logger, "bolt"),
      processEventErrorHandler: intake.processEventErrorHandler,
      bodyLimit: SLACK_BODY_LIMIT,
    });
    const guard = { signingSecret: o.signingSecret, path: o.path, bodyLimit: SLACK_BODY_LIMIT };
    guardHttpReceiver(receiver, guard, intake.screenFor(true), intake.log);
    return receiver;
  }

  async listen(app: App): Promise<void> {
    const o = this.options;
    const server = (await app
      .start(
        { port: o.port, ...(o.host ? { host: o.host } : {}) },
        {
          requestTimeout: REQUEST_TIMEOUT_MS,
          headersTimeout: HEADERS_TIMEOUT_MS,
          connectionsCheckingInterval: TIMEOUT_CHECK_MS,
        },
      )
      .catch((error: unknown) => {
        throw listenFailure(error, o.port);
      })) as Server;
    server.maxConnections = MAX_CONNECTIONS;
    this.server = server;
    this.options.logger.info(
      { port: (server.address() as AddressInfo).port, path: o.path },
      "slack http events listening",
    );
  }

  /** Cuts every open connection; Bolt's stop() then closes the server without waiting on them. */
  close(): void {
    this.server?.closeAllConnections();
    this.server = undefined;
  }

  health(): ChannelHealth {
    const listening = this.server?.listening === true;
    return { ready: listening, state: listening ? "listening" : "stopped" };
  }

  address(): AddressInfo | undefined {
    const address = this.server?.address();
    return typeof address === "object" && address !== null ? address : undefined;
  }
}
