/**
 * SlackReceiver: the seam between the Slack channel and the way Slack delivers to it, like
 * Bolt's own `Receiver` one level up. Socket Mode (slack-socket-receiver.ts) and the HTTP Events
 * API (slack-http-receiver.ts) each build their Bolt receiver with the intake screen in front,
 * start the App on it, and say how the connection is doing; the channel picks one when it is
 * constructed and never asks which one it has.
 */
import type { App, Receiver } from "@slack/bolt";
import type { AddressInfo } from "node:net";
import type { ChannelHealth } from "../channel-adapter.js";
import type { IntakeLog } from "../intake-log.js";
import type { Screen } from "./slack-intake-guard.js";

/** What a receiver screens deliveries with before Bolt reads them. */
export interface ReceiverIntake {
  /** The screen for this transport (`http`: bodies came over the Events API). */
  readonly screenFor: (http: boolean) => Screen;
  readonly log: IntakeLog;
  /** Bolt's handler for a body that still makes it fail: acknowledged, so Slack does not redeliver. */
  readonly processEventErrorHandler: (args: { error: Error }) => Promise<boolean>;
}

/** One way Slack reaches the channel (see the module comment). */
export interface SlackReceiver {
  /** For the banner: "socket mode", "http :3000/slack/events". */
  readonly description: string;
  /** The Bolt receiver for one run of the App, with every delivery screened first. */
  open(intake: ReceiverIntake): Receiver;
  /** Start `app` (built on `open`'s receiver) and watch its connection. */
  listen(app: App): Promise<void>;
  /** The App has stopped: stop watching it. */
  close(): void;
  health(): ChannelHealth;
  /** Where it listens, when it listens on a local port. */
  address(): AddressInfo | undefined;
}
