/**
 * TelegramReceiver: the seam between the Telegram channel and the way updates reach it — long
 * polling (telegram-polling.ts) or a webhook (telegram-webhook.ts). Both feed the same grammY
 * Bot; the channel picks one when it is constructed and never asks which one it has.
 */
import type { ChannelHealth } from "../channel-adapter.js";

/** One way updates reach the channel (see the module comment). */
export interface TelegramReceiver {
  /** For logs: "polling" or "webhook". */
  readonly mode: "polling" | "webhook";
  /** For the banner: "polling", "webhook /telegram/webhook". */
  readonly description: string;
  /** Begin receiving updates (the bot is identified already). */
  start(): Promise<void>;
  /** Stop receiving; resolves once no update is being fetched any more. */
  stop(): Promise<void>;
  health(): ChannelHealth;
  /**
   * Whether Telegram will deliver update `updateId` again, asked once `stop` has resolved: a
   * webhook update its stop cut unanswered. Never when unset (polling confirms what it fetched).
   */
  redelivers?(updateId: number): boolean;
  /** The local port it listens on, when it listens on one. */
  port(): number | undefined;
}
