/**
 * One message as a channel hands it to the session layer, after the platform payload has been
 * validated and normalised: who wrote what where, the files it carried, and its dedupe keys.
 */
import type { Attachment } from "./attachment.js";
import type { PlatformUser, ThreadTarget } from "./thread-target.js";

export interface InboundFile {
  /** Workspace-relative path where the channel saved the file. */
  readonly path: string;
  readonly name: string;
  readonly bytes: number;
  /** What the platform says the file is (MIME type), when it says. */
  readonly mediaType?: string;
  /** Length of a voice note or audio clip, in seconds, when known. */
  readonly durationS?: number;
  /**
   * A voice note the sender recorded themselves on the platform (Telegram's voice message, not
   * forwarded; Slack's audio clip): its transcript is the sender's own words and joins their
   * message. Any other recording's transcript is a file's content (attachments/inbound-attachments.ts).
   */
  readonly ownVoice?: boolean;
}

export interface InboundMessage {
  /** Every id this delivery is known by (event id, channel+ts, update id): all are deduped. */
  readonly dedupeKeys: readonly string[];
  readonly target: ThreadTarget;
  readonly user: PlatformUser;
  readonly text: string;
  readonly files: readonly InboundFile[];
  /**
   * Images among the files, as records the engine adapts to each model call, and the text read
   * from files (file-text records): never part of `text`, which holds the person's words alone.
   */
  readonly attachments?: readonly Attachment[];
  /** ISO time the platform says it was sent. */
  readonly sentAt: string;
  /**
   * The name this bot goes by where commands are addressed to a bot (Telegram's username, without
   * the @): a command addressed to another name (`/new@OtherBot`) is another bot's, neither run
   * nor passed to the agent. Unset where commands name no bot (Slack, the console).
   */
  readonly botUsername?: string;
}
