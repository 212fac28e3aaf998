/**
 * Socket Mode: Slack delivers over a WebSocket the app opens with its xapp token, so no public
 * URL is needed. Our client (slack-socket-client.ts) keeps the connection, in a thread of its own
 * that acks an event the moment it arrives (slack-socket-thread.ts); this side screens each frame
 * it passes on and hands the envelopes that pass to Bolt, as Bolt's own SocketModeReceiver would,
 * and acks the interactive and slash-command ones when Bolt's handler does. SocketHealth follows
 * the connection (and restarts a reconnect loop that gave up) for readiness.
 */
import type { App, Receiver, ReceiverEvent } from "@slack/bolt";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import type { ChannelHealth } from "../channel-adapter.js";
import { SocketHealth } from "./slack-connection.js";
import { socketModeFailure } from "./slack-failure.js";
import { type SocketEnvelope, screenSocketFrame } from "./slack-intake-guard.js";
import type { ReceiverIntake, SlackReceiver } from "./slack-receiver.js";
import { SocketClient } from "./slack-socket-client.js";

export interface SocketReceiverOptions {
  /** xapp-… token (apps.connections.open). */
  readonly appToken: string;
  /** Web API base URL with a trailing slash; apps.connections.open goes there too. */
  readonly slackApiUrl: string;
  readonly logger: Logger;
  /** Health tuning (defaults: pong 5 s, server ping 30 s, watchdog 5 min, main thread silence 10 s). */
  readonly clientPingTimeoutMs?: number;
  readonly serverPingTimeoutMs?: number;
  readonly watchdogMs?: number;
  readonly mainSilenceMs?: number;
}

/** An ack that answers once: Bolt may call it again after a failed handler. */
function ackOnce(send: (body: Readonly<Record<string, unknown>>) => void): ReceiverEvent["ack"] {
  let sent = false;
  return async (response) => {
    if (sent) return;
    sent = true;
    send(typeof response === "string" ? { text: response } : { ...response });
  };
}

/** The Socket Mode SlackReceiver (see the module comment). */
export class SocketReceiver implements SlackReceiver {
  readonly description = "socket mode";
  private socket: SocketHealth | undefined;

  constructor(private readonly options: SocketReceiverOptions) {}

  open(intake: ReceiverIntake): Receiver {
    const o = this.options;
    const screen = intake.screenFor(false);
    let app: App | undefined;
    const client = new SocketClient(
      {
        appToken: o.appToken,
        slackApiUrl: o.slackApiUrl,
        logger: o.logger,
        clientPingTimeoutMs: o.clientPingTimeoutMs ?? 5_000,
        serverPingTimeoutMs: o.serverPingTimeoutMs ?? 30_000,
        mainSilenceMs: o.mainSilenceMs ?? 10_000,
      },
      {
        frame: (text, acked) => {
          // The thread acked an event already; anything else is answered once, from here.
          const answer = (envelopeId: string, body: Readonly<Record<string, unknown>>) => {
            if (!acked) client.ack(envelopeId, body);
          };
          const envelope = screenSocketFrame(text, screen, intake.log, (envelopeId, reply) =>
            answer(envelopeId, reply === undefined ? {} : { text: reply }),
          );
          if (envelope && app) deliver(app, envelope, answer);
        },
        refused: (reason) => intake.log.refused("socket_frame", { reason }),
      },
    );
    const deliver = (
      to: App,
      envelope: SocketEnvelope,
      answer: (envelopeId: string, body: Readonly<Record<string, unknown>>) => void,
    ): void => {
      const event: ReceiverEvent = {
        body: envelope.payload as ReceiverEvent["body"],
        ack: ackOnce((body) => answer(envelope.envelope_id, body)),
        retryNum: envelope.retry_attempt,
        retryReason: envelope.retry_reason,
      };
      to.processEvent(event).catch(async (error: unknown) => {
        const failure = error instanceof Error ? error : new Error(String(error));
        if (await intake.processEventErrorHandler({ error: failure })) await event.ack();
      });
    };
    this.socket = new SocketHealth(client, o.logger, o.watchdogMs ?? 300_000);
    return {
      init: (bolt: App) => {
        app = bolt;
      },
      start: () => client.start(),
      stop: () => client.stop(),
    };
  }

  async listen(app: App): Promise<void> {
    await app.start().catch((error: unknown) => {
      throw socketModeFailure(error);
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
