/**
 * Messenger: how tools post outside the running turn's stream. Implemented by the channel layer
 * (Slack / Telegram); the tools only see this interface. The session's own ThreadTarget comes
 * from `request.metadata.target` (put there by the session layer).
 */
import type { ThreadTarget } from "../../core/thread-target.js";

/** The outcome of a send: where it landed (for the model) or why it failed. */
export type MessengerResult =
  | { readonly ok: true; readonly where: string }
  | { readonly ok: false; readonly error: string };

/** A workspace file to upload: where to read it (the open file) and the name people see. */
export interface OutgoingFile {
  readonly path: string;
  readonly name: string;
}

export interface Messenger {
  /**
   * Post `text` to `channel` (an id or name on `fromTarget`'s platform and workspace). When
   * `channel` equals `fromTarget.channel` the message goes into `fromTarget`'s thread.
   */
  sendMessage(fromTarget: ThreadTarget, channel: string, text: string): Promise<MessengerResult>;
  /** Upload a file (confined to the workspace and held open by the caller) into `target`'s thread. */
  sendFile(target: ThreadTarget, file: OutgoingFile, caption?: string): Promise<MessengerResult>;
}
