/**
 * Socket Mode: Slack delivers over a WebSocket the app opens with its xapp token, so no public
 * URL is needed. Frames are screened before the SDK client reads them, and SocketHealth follows
 * the connection (and restarts a reconnect loop that gave up) for readiness.
 */
import { type App, type Receiver, SocketModeReceiver } from "@slack/bolt";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import type { ChannelHealth } from "../channel-adapter.js";
import { SocketHealth } from "./slack-connection.js";
import { slackFailure } from "./slack-failure.js";
import { guardSocketMode } from "./slack-intake-guard.js";
import { sdkLogger } from "./slack-logger.js";
import type { ReceiverIntake, SlackReceiver } from "./slack-receiver.js";

export interface SocketReceiverOptions {
  /** xapp-… token (apps.connections.open). */
  readonly appToken: string;
  /** Web API base URL with a trailing slash; apps.connections.open goes there too. */
  readonly slackApiUrl: string;
  readonly logger: Logger;
  /** Health tuning (defaults: pong 5 s, server ping 30 s, watchdog 5 min). */
  readonly clientPingTimeoutMs?: number;
  readonly serverPingTimeoutMs?: number;
  readonly watchdogMs?: number;
}

/** The Socket Mode SlackReceiver (see the module comment). */
export class SocketReceiver implements SlackReceiver {
  readonly description = "socket mode";
  private socket: SocketHealth | undefined;

  constructor(private readonly options: SocketReceiverOptions) {}

  open(intake: ReceiverIntake): Receiver {
    const o = this.options;
    const receiver = new SocketModeReceiver({
      appToken: o.appToken,
      logger: sdkLogger(o.logger, "bolt"),
      installerOptions: { clientOptions: { slackApiUrl: o.slackApiUrl } },
      clientPingTimeout: o.clientPingTimeoutMs ?? 5_000,
      serverPingTimeout: o.serverPingTimeoutMs ?? 30_000,
      processEventErrorHandler: intake.processEventErrorHandler,
    });
    guardSocketMode(receiver.client, intake.screenFor(false), intake.log);
    this.socket = new SocketHealth(receiver.client, o.logger, o.watchdogMs ?? 300_000);
    return receiver;
  }

  async listen(app: App): Promise<void> {
    await app.start().catch((error: unknown) => {
      throw slackFailure(error, "app", "Socket Mode (apps.connections.open)");
    });
    this.socket?.watch();
  }

  close(): void {
    this.socket?.stop();
  }

  health(): ChannelHealth {
    const state = this.socket?.current() ?? "idle";
    return { ready: state === "connected", state };
  }

  address(): AddressInfo | undefined {
    return undefined;
  }
}
