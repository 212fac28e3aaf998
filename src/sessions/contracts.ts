/**
 * The session layer as channels see it: what a channel calls with an inbound message, a press or
 * a command, and what it gets back. The shared shapes (targets, messages, presses, thread output)
 * live in core/.
 */
import type { ButtonPress, PressResult } from "../core/button-press.js";
import type { InboundMessage } from "../core/inbound-message.js";
import type { ThreadOutputFactory } from "../core/thread-output.js";
import type { PlatformUser, ThreadTarget } from "../core/thread-target.js";

/** How a command's reply is shown. */
export interface CommandOptions {
  /**
   * The reply is shown to the person alone (a Slack slash command's ephemeral answer in a
   * channel): a listing of their standing items is then written into the reply, not posted as
   * cards the whole conversation would see.
   */
  readonly privately?: boolean;
}

/** What became of an inbound message. */
export type ReceiveResult =
  | { readonly status: "started" | "queued" | "answered" | "command" | "duplicate" }
  | { readonly status: "ignored"; readonly reason: string };

/**
 * The session layer as channels see it. `receive` records the message (dedupe, persist) and
 * schedules the turn; it resolves once recorded, never when the turn ends, so platform handlers
 * can ack at once.
 */
export interface ConversationService {
  registerOutput(platform: string, factory: ThreadOutputFactory): void;
  receive(message: InboundMessage): Promise<ReceiveResult>;
  press(press: ButtonPress): Promise<PressResult>;
  /**
   * A control command (slash command or its text form): stop, new, mode <m>, model <name>,
   * status, grants [revoke], approve <id>, deny <id>. Resolves with the reply text to show.
   */
  command(
    target: ThreadTarget,
    user: PlatformUser,
    name: string,
    args: readonly string[],
    options?: CommandOptions,
  ): Promise<string>;
  /**
   * Records the ids an interaction that is not a message (a slash command, a button press) is known
   * by, in the same store-backed record `receive` deduplicates messages on; true when none of them
   * had been seen. A channel drops the interaction when false: a redelivery or a replayed request.
   */
  firstDelivery(keys: readonly string[]): Promise<boolean>;
  /**
   * Optional: whether a session exists for this target. Channels ask it when a thread reply
   * without a mention arrives in a thread they have no local record of (e.g. after a restart),
   * to decide whether the reply continues a conversation.
   */
  hasSession?(target: ThreadTarget): Promise<boolean>;
}
