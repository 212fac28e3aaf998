/**
 * Messenger: how tools post outside the running turn's stream. Implemented by the channel layer
 * (Slack / Telegram); the tools only see this interface. The session's own ThreadTarget comes
 * from `request.metadata.target` (put there by the session layer), the person a message is sent
 * for from `request.requester`.
 */
import type { Caller, ThreadTarget } from "../../core/thread-target.js";

/** The outcome of a send: where it landed (for the model) or why it failed. */
export type MessengerResult =
  | { readonly ok: true; readonly where: string }
  | { readonly ok: false; readonly error: string };

/** A workspace file to upload: where to read it (the open file) and the name people see. */
export interface OutgoingFile {
  readonly path: string;
  readonly name: string;
}

/** What a channel offers the tools for posting outside the running turn (see the module header). */
export interface Messenger {
  /**
   * Post `text` for `sender` (the conversation the call comes from and the person it acts for)
   * to `channel` (an id or name on the platform and workspace of `sender.target`).
   * When `channel` equals `sender.target.channel` the message goes into that thread; any other
   * channel only when `sender.requester` is a member of it, and a refusal does not say whether a
   * channel the requester is not in exists.
   */
  sendMessage(sender: Caller, channel: string, text: string): Promise<MessengerResult>;
  /**
   * Where sendMessage would post for `sender` to `channel`, as the platform resolves it — for the
   * approval card, which names that rather than the argument ("#payroll (C0PAYROLL)", "this
   * thread"); undefined when sendMessage would refuse it, so, as its refusal, it says nothing of
   * whether a channel the requester is not in exists.
   */
  destinationOf(sender: Caller, channel: string): Promise<string | undefined>;
  /** Upload a file (confined to the workspace and held open by the caller) into `target`'s thread. */
  sendFile(target: ThreadTarget, file: OutgoingFile, caption?: string): Promise<MessengerResult>;
}
