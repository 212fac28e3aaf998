/**
 * Files people send the bot: a document, a voice note or audio clip, or the largest photo size within the cap, is fetched
 * with getFile + `<apiRoot>/file/bot<token>/<file_path>` into the chat's uploads folder, in its
 * topic's (`uploads/telegram_tg_<chat>/<topic or ->/`: core/upload-folders.ts; private to the chat),
 * written without following a link the agent's shell may have left there
 * (service-file-access.ts) nor into another conversation's uploads (conversation-paths.ts), and
 * handed to the session as a workspace-relative path.
 * Before the download, the upload gate (attachments/upload-gate.ts) must let the file through:
 * the sender's bytes of the day and the free disk space.
 * Oversized, refused, failed or overdue downloads (the shared deadline: shared/body-within.ts)
 * become short notes instead of errors, and so do kinds the bot cannot read (a video, a video
 * message, an animation, a shared contact): never a silent loss. An animation (a GIF) always
 * comes with a `document` too (Bot API: for backward compatibility), so it is recognised before
 * the document is: like a video, it is noted, never downloaded. A sticker and a shared location
 * are no file: they travel as words (telegram-inbound.ts standInText).
 */
import { posix } from "node:path";
import type { Api } from "grammy";
import type { Message } from "grammy/types";
import type { UploadGate, UploadHold } from "../../attachments/upload-gate.js";
import type { ThreadTarget } from "../../core/thread-target.js";
import { uploadFolderOf } from "../../core/upload-folders.js";
import type { InboundFile } from "../../core/inbound-message.js";
import { conversationPaths } from "../../tools/files/conversation-paths.js";
import { refusalReason, saveInWorkspace } from "../../tools/files/service-file-access.js";
import { downloadDeadline, megabytes, readBodyWithin } from "../shared/body-within.js";
import type { WorkspacePaths } from "../../tools/files/workspace-paths.js";
import { errorText } from "./telegram-errors.js";
import type { TelegramMessage } from "./telegram-inbound.js";
import { isForwarded } from "./telegram-word-origin.js";

export interface TelegramFilesOptions {
  readonly api: Api;
  readonly token: string;
  readonly apiRoot: string;
  /**
   * Where files are saved, without following a link (service-file-access.ts), each as its chat's
   * session sees the workspace (conversation-paths.ts).
   */
  readonly workspace: WorkspacePaths;
  readonly maxBytes: number;
  /** How long a file's download may take, in ms (default: shared/body-within.ts's, as Slack's). */
  readonly downloadTimeoutMs?: number;
  /**
   * Asked before each download: the sender's daily bytes and the free disk space
   * (attachments/upload-gate.ts).
   */
  readonly uploads: UploadGate;
}

interface Attachment {
  readonly fileId: string;
  readonly name: string;
  readonly declaredBytes: number | undefined;
  readonly mediaType?: string | undefined;
  readonly durationS?: number | undefined;
  /**
   * A voice message the sender recorded (not forwarded, not sent through an inline bot): its
   * transcript is their words.
   */
  readonly ownVoice?: boolean;
}

export interface Downloaded {
  readonly files: readonly InboundFile[];
  /** Human-readable notes about files that were not saved. */
  readonly notes: readonly string[];
}

function safeName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? "";
  const cleaned = base.replace(/[^\w.+-]/g, "_").replace(/^\.+/, "");
  return (cleaned || "file").slice(0, 120);
}

/** The file in a message, if any: a document, a voice note, audio, or the largest photo size under the cap. */
export function attachmentOf(message: TelegramMessage, maxBytes: number): Attachment | undefined {
  // A GIF's `document` is the same animation, which the bot cannot read (see module comment).
  if (message.animation) return undefined;
  if (message.document) {
    const { document } = message;
    return {
      fileId: document.file_id,
      name: safeName(document.file_name ?? `document-${document.file_unique_id}`),
      declaredBytes: document.file_size,
      mediaType: document.mime_type,
    };
  }
  const sound = message.voice ?? message.audio;
  if (sound) {
    const named = message.audio?.file_name;
    return {
      fileId: sound.file_id,
      name: safeName(named ?? `${message.voice ? "voice" : "audio"}-${sound.file_unique_id}.ogg`),
      declaredBytes: sound.file_size,
      mediaType: sound.mime_type ?? (message.voice ? "audio/ogg" : undefined),
      durationS: sound.duration,
      // Forwarded, or sent through an inline bot (`via_bot`: that bot's clip), it is someone else's.
      ownVoice: message.voice !== undefined && !isForwarded(message) && message.via_bot === undefined,
    };
  }
  if (!message.photo) return undefined;
  const sizes = [...message.photo].sort((a, b) => b.width * b.height - a.width * a.height);
  const photo = sizes.find((size) => (size.file_size ?? 0) <= maxBytes) ?? sizes[0];
  return photo
    ? {
        fileId: photo.file_id,
        name: `photo-${safeName(photo.file_unique_id)}.jpg`,
        declaredBytes: photo.file_size,
        mediaType: "image/jpeg",
      }
    : undefined;
}

/** Message kinds the bot cannot read, named as grammY's Message names them. */
type UnreadableKind = Extract<keyof Message, "video" | "video_note" | "animation" | "contact">;

/** What each is called, and whether it is a file or another kind of message. */
const UNREADABLE: Readonly<Record<UnreadableKind, readonly [what: string, sort: "file" | "message"]>> = {
  video: ["a video", "file"],
  video_note: ["a video message", "file"],
  animation: ["an animation", "file"],
  contact: ["a shared contact", "message"],
};

const UNREADABLE_KINDS = Object.keys(UNREADABLE) as readonly UnreadableKind[];

function unreadableOf(message: TelegramMessage): readonly [string, string] | undefined {
  const kind = UNREADABLE_KINDS.find((name) => message[name] !== undefined);
  return kind ? UNREADABLE[kind] : undefined;
}

/**
 * The note for a message of a kind the bot cannot read (a video, a shared contact…),
 * which the person and the model are told instead of it vanishing; undefined for any other.
 */
export function unreadableNote(message: TelegramMessage): string | undefined {
  const unreadable = unreadableOf(message);
  return unreadable && `${unreadable[0]} — a kind of ${unreadable[1]} I can't read; it was not saved.`;
}

/** Downloads message attachments into the workspace (see module comment). */
export class TelegramFiles {
  constructor(private readonly options: TelegramFilesOptions) {}

  /** How the file in `message` is named (its note, when the bot cannot read its kind). */
  nameOf(message: TelegramMessage): string {
    return attachmentOf(message, this.options.maxBytes)?.name ?? unreadableOf(message)?.[0] ?? "a message";
  }

  /** Whether `download` has anything to do for `message`: a file to save, or a kind it notes as unreadable. */
  carriesFile(message: TelegramMessage): boolean {
    return attachmentOf(message, this.options.maxBytes) !== undefined || unreadableOf(message) !== undefined;
  }

  async download(message: TelegramMessage, target: ThreadTarget): Promise<Downloaded> {
    const attachment = attachmentOf(message, this.options.maxBytes);
    if (!attachment) {
      const note = unreadableNote(message);
      return { files: [], notes: note ? [note] : [] };
    }
    const limit = this.options.maxBytes;
    if (attachment.declaredBytes !== undefined && attachment.declaredBytes > limit) {
      return {
        files: [],
        notes: [
          `${attachment.name} (${megabytes(attachment.declaredBytes)}) was not saved: over the ${megabytes(limit)} limit.`,
        ],
      };
    }
    const relative = posix.join(uploadFolderOf(target), `${message.message_id}-${attachment.name}`);
    const deadline = downloadDeadline(this.options.downloadTimeoutMs);
    // The sender's daily bytes and the free disk space, before anything is fetched.
    const admission = await this.options.uploads.admit(
      target.platform,
      String(message.from?.id ?? message.chat.id),
      attachment.declaredBytes,
      limit,
    );
    if (!admission.ok)
      return { files: [], notes: [`${attachment.name} was not saved: ${admission.reason}.`] };
    let hold: UploadHold | undefined = admission;
    try {
      const file = await this.options.api.getFile(attachment.fileId);
      if (!file.file_path) throw new Error("Telegram returned no file_path");
      // The deadline covers the answer's body too: it aborts the stream readBodyWithin reads.
      const response = await fetch(
        `${this.options.apiRoot}/file/bot${this.options.token}/${file.file_path}`,
        { signal: deadline.signal },
      );
      if (!response.ok || !response.body) throw new Error(`file download answered HTTP ${response.status}`);
      const body = await readBodyWithin(
        response.body,
        limit,
        () => new Error(`over the ${megabytes(limit)} limit`),
      );
      // As the chat's own session sees the workspace: a link in its folder into another
      // conversation's uploads is refused, as the file tools refuse it.
      await saveInWorkspace(conversationPaths(this.options.workspace, target), relative, body);
      await hold.settle(body.byteLength);
      hold = undefined;
      const saved: InboundFile = {
        path: relative,
        name: attachment.name,
        bytes: body.byteLength,
        ...(attachment.mediaType ? { mediaType: attachment.mediaType } : {}),
        ...(attachment.durationS !== undefined ? { durationS: attachment.durationS } : {}),
        ...(attachment.ownVoice ? { ownVoice: true } : {}),
      };
      return { files: [saved], notes: [] };
    } catch (error) {
      await hold?.release();
      const reason = deadline.overdue(error) ?? refusalReason(error) ?? errorText(error);
      return { files: [], notes: [`${attachment.name} could not be saved: ${reason}.`] };
    }
  }
}
