/**
 * What the agent gets from the files a person sent, shared by every channel. The channel saves
 * each file into the workspace first; here each saved file becomes what a model can use: an
 * image becomes an attachment record (adapted per model call later), a PDF its extracted text,
 * voice or audio its transcript (when transcription is configured), a text-like file its
 * fenced content. Anything that cannot be used becomes a one-line note the model sees and the
 * person is told — never a silent loss, never a crash. Whether a recording may be transcribed,
 * and the hint how to enable transcription, is recording-intake.ts's concern.
 *
 * A file's text is not the person's words, so it never joins them: a PDF's extract, a text file
 * and the transcript of audio that is not the sender's own voice note (an audio file, a forwarded
 * voice note) become file-text attachment records, which the engine shows the model as blocks of
 * their own marked as file content (core/attachment.ts, engine/outbound.ts). Only the transcript
 * of a voice note the sender recorded themselves (`InboundFile.ownVoice`) joins their message as
 * their words: they said it, as they would have typed it.
 *
 * Nor do the service's own lines about files join them: they name files as their senders named
 * them, and a name is anyone's choice. A line only the model needs (a recording not transcribed,
 * a text file too long to include) is a file-note record; a note the person is told too goes back
 * to the channel in `notes`, which passes it on as a file-note record (the engine shows them all
 * in one service block, engine/outbound.ts). An own voice note's transcript is headed by its
 * length alone: the file itself, name and path, is listed in that block.
 */
import { qualifiedUserId } from "../approvals/authorisation.js";
import { open } from "node:fs/promises";
import type { Stats } from "node:fs";
import type { Logger } from "pino";
import { type Attachment, type FileTextAttachment, fileNote, formatBytes } from "../core/attachment.js";
import { probeImageFile } from "../media/image-probe.js";
import { clipWithMarker } from "../core/surrogate-pairs.js";
import type { InboundFile } from "../core/inbound-message.js";
import { sessionKeyOf, type ThreadTarget } from "../core/thread-target.js";
import { fenceLanguage, fileKindOf } from "./file-kind.js";
import { extractPdfText } from "./pdf-text.js";
import { type IntakeTranscription, RecordingIntake } from "./recording-intake.js";
import { type BudgetTurn, budgetTurns } from "./budget-turns.js";
import { conversationPaths } from "../tools/files/conversation-paths.js";
import { readUpTo } from "../tools/files/anchored-fs.js";
import { withWorkspaceFile } from "../tools/files/service-file-access.js";
import type { WorkspacePaths } from "../tools/files/workspace-paths.js";
import { KeyedMutex } from "../store/key-mutex.js";

/** Caps from config `attachments.*`. */
export interface AttachmentSettings {
  /** Files handled per message; the rest are named in a note. */
  readonly maxFiles: number;
  /** Characters of one inlined extract (PDF text, text file, transcript). */
  readonly maxChars: number;
  readonly pdfMaxPages: number;
  /** Text-like files up to this size are inlined; bigger ones stay files for read_file. */
  readonly textInlineMaxBytes: number;
  /**
   * Voice notes and audio the platform says are longer than this are not transcribed (a paid
   * endpoint billed by the minute: a 20 MB file of low-bitrate speech holds hours). Every recording
   * is bounded by size as well, at most this long at AUDIO_BYTES_PER_S_BOUND (recording-intake.ts): a stated length is
   * the sender's client's word (Telegram), and audio may state none (Slack's files).
   */
  readonly transcriptionMaxDurationS: number;
  /**
   * Voice notes and audio one person may have transcribed per rolling hour, counted where
   * `IntakeOptions.transcription.budget` counts (the app: in the store, across every process on
   * it): each recording is bounded by its size, but a low-bitrate one may still run past the
   * length cap, so the count is what bounds one person's spend.
   */
  readonly transcriptionsPerHour: number;
}

export const DEFAULT_ATTACHMENT_SETTINGS: AttachmentSettings = Object.freeze({
  maxFiles: 10,
  maxChars: 20_000,
  pdfMaxPages: 50,
  textInlineMaxBytes: 100 * 1024,
  transcriptionMaxDurationS: 30 * 60,
  transcriptionsPerHour: 30,
});

export interface IntakeOptions {
  /**
   * The workspace the files' paths are relative to, as the service touches it: read back and
   * extracts written without following a link (service-file-access.ts), and only as the
   * message's conversation sees it (conversation-paths.ts).
   */
  readonly workspace: WorkspacePaths;
  readonly settings?: AttachmentSettings;
  readonly logger: Logger;
  /** Absent when `transcription` is not configured: voice and audio are then saved and noted. */
  readonly transcription?: IntakeTranscription;
}

/** What a message's files amount to. */
export interface IntakeResult {
  /**
   * Text joined to the message text: the transcripts of the sender's own voice notes (their
   * words), with no file name. Never a file's content, never the service's lines about files.
   */
  readonly sections: readonly string[];
  /**
   * Images, the text read from files (file-text records) and the service's lines only the model
   * needs (file-note records): all kept apart from the person's words.
   */
  readonly attachments: readonly Attachment[];
  /**
   * One line each, for the model and the person: the channel tells the person and passes each on
   * as a file-note record (`fileNote`), never in the message text.
   */
  readonly notes: readonly string[];
  /** For the person only (how to enable transcription). */
  readonly hints: readonly string[];
}

/** What a message without files amounts to (shared: nothing in it can change). */
export const NO_FILES: IntakeResult = Object.freeze({
  sections: Object.freeze([]),
  attachments: Object.freeze([]),
  notes: Object.freeze([]),
  hints: Object.freeze([]),
});

/** Who sent a message's files, and in which conversation. */
interface Origin {
  readonly sessionKey: string;
  /** Platform-qualified user id ("telegram:42"). */
  readonly sender: string;
  /**
   * The workspace as the conversation's own session sees it (conversation-paths.ts): a path that
   * leads into another conversation's uploads is not read.
   */
  readonly workspace: WorkspacePaths;
}

/** What one file yields (usually one of these). */
interface Outcome {
  readonly section?: string;
  readonly attachment?: Attachment;
  readonly note?: string;
  readonly hint?: string;
}

const HEAD_BYTES = 4096;

async function headOf(absolute: string): Promise<Uint8Array> {
  const handle = await open(absolute, "r");
  try {
    const buffer = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, HEAD_BYTES, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** A fence that no run of backticks in `text` can close early. */
function fenced(text: string, language: string): string {
  // A loop, not Math.max(...runs): a file of 100,000 runs would be as many arguments, and throw.
  let longest = 2;
  for (const run of text.matchAll(/`+/g)) longest = Math.max(longest, run[0].length);
  const fence = "`".repeat(longest + 1);
  return `${fence}${language}\n${text.replace(/\n$/, "")}\n${fence}`;
}

/** `text` kept to `maxChars` whole characters, a cut one saying how much is left and where to read it. */
function capped(text: string, maxChars: number, whole: string): string {
  return clipWithMarker(
    text,
    maxChars,
    (dropped) => `\n… [${dropped} more characters; read_file ${whole} for the rest]`,
  );
}

/** A file-text record of `file`. */
function fileText(
  file: InboundFile,
  source: FileTextAttachment["source"],
  about: string,
  text: string,
): FileTextAttachment {
  return { kind: "file-text", path: file.path, name: file.name, source, about, text };
}

/**
 * `file` as it is judged: the larger of the size it was saved with and the size of the file now
 * open. The uploads folder is the conversation's sandboxed shell's to write, so a command still
 * running there can grow a just-saved upload; every size check (a text file small enough to
 * inline, a recording short enough to transcribe) and every read is bounded by this size.
 */
function judged(file: InboundFile, stats: Stats): InboundFile {
  return stats.size > file.bytes ? { ...file, bytes: stats.size } : file;
}

/** Turns saved files into model input (see the module header). */
export class AttachmentIntake {
  private readonly settings: AttachmentSettings;
  private readonly recordings: RecordingIntake;
  /**
   * A sender's PDFs go to the process's PDF reader one at a time, keyed by sender. Its worker
   * slots are shared, its line first come first served, and a message's files are read in
   * parallel: one person sending ten PDFs that each take the reader its whole time held every slot
   * for minutes while everyone else's PDFs failed at the wait limit. Now anyone else's PDF waits
   * behind one of theirs at most; their own later PDFs wait for their earlier ones.
   */
  private readonly pdfReads = new KeyedMutex();

  constructor(private readonly options: IntakeOptions) {
    this.settings = options.settings ?? DEFAULT_ATTACHMENT_SETTINGS;
    this.recordings = new RecordingIntake({
      transcription: options.transcription,
      maxDurationS: this.settings.transcriptionMaxDurationS,
      perHour: this.settings.transcriptionsPerHour,
      maxChars: this.settings.maxChars,
      logger: options.logger,
    });
  }

  /** Split off the files over the per-message count (before downloading them), with a note naming them. */
  limit<T>(
    files: readonly T[],
    nameOf: (file: T) => string,
  ): { kept: readonly T[]; notes: readonly string[] } {
    const max = this.settings.maxFiles;
    if (files.length <= max) return { kept: files, notes: [] };
    const dropped = files.slice(max).map(nameOf);
    return {
      kept: files.slice(0, max),
      notes: [
        `${dropped.length} more file(s) were not taken (${dropped.join(", ")}): at most ${max} files per message.`,
      ],
    };
  }

  /**
   * Process a message's saved files, sent in the thread of `target` by the platform user
   * `userId`. Never throws.
   */
  async process(files: readonly InboundFile[], target: ThreadTarget, userId: string): Promise<IntakeResult> {
    // Most messages bring no file: nothing to look up or read, and no result to build for them.
    if (files.length === 0) return NO_FILES;
    const { kept, notes: overCount } = this.limit(files, (file) => file.name);
    const from: Origin = {
      sessionKey: sessionKeyOf(target),
      sender: qualifiedUserId(target.platform, userId),
      workspace: conversationPaths(this.options.workspace, target),
    };
    const turns = budgetTurns(kept.length);
    const outcomes = await Promise.all(kept.map((file, index) => this.one(file, from, turns[index]!)));
    const pick = <K extends keyof Outcome>(key: K): NonNullable<Outcome[K]>[] =>
      outcomes.flatMap((outcome) => (outcome[key] === undefined ? [] : [outcome[key]!]));
    return {
      sections: pick("section"),
      attachments: pick("attachment"),
      notes: [...pick("note"), ...overCount],
      hints: pick("hint"),
    };
  }

  private async one(file: InboundFile, from: Origin, turn: BudgetTurn): Promise<Outcome> {
    try {
      // Held open while it is read: the agent's shell may replace the path meanwhile.
      return await withWorkspaceFile(from.workspace, file.path, (opened, stats) =>
        this.read(judged(file, stats), opened, from, turn),
      );
    } catch (error) {
      this.options.logger.warn({ err: error, file: file.path }, "attachment could not be processed");
      const reason = error instanceof Error ? error.message : String(error);
      return { note: `${file.name} could not be read: ${reason}. It is saved at ${file.path}.` };
    } finally {
      turn.pass();
    }
  }

  /** What the saved file, open at `opened`, becomes for the model. */
  private async read(file: InboundFile, opened: string, from: Origin, turn: BudgetTurn): Promise<Outcome> {
    const kind = fileKindOf(file.name, file.mediaType, await headOf(opened));
    // Only recordings take from the hourly budget: the files after this one need not wait for it.
    if (kind !== "audio") turn.pass();
    switch (kind) {
      case "image":
        return await this.image(file, opened);
      case "pdf":
        return await this.pdf(file, opened, from);
      case "audio":
        return await this.recordings.take(file, opened, from, turn);
      case "text":
        return await this.text(file, opened);
      case "other":
        return {
          note: `${file.name} (${file.mediaType ?? "unknown type"}) is not a kind of file I can read directly; it is saved at ${file.path}.`,
        };
    }
  }

  private async image(file: InboundFile, absolute: string): Promise<Outcome> {
    const probe = await probeImageFile(absolute, file);
    if (!probe)
      return {
        note: `${file.name} is an image format I cannot show the model (only PNG, JPEG, GIF and WebP); it is saved at ${file.path}.`,
      };
    if (!probe.usable)
      return {
        note: `${file.name} is not shown to the model: ${probe.reason} (a picture that large can exhaust whoever decodes it). It is saved at ${file.path}; send a smaller version to have it looked at.`,
      };
    return { attachment: probe.image };
  }

  private async pdf(file: InboundFile, absolute: string, from: Origin): Promise<Outcome> {
    const pdf = await this.pdfReads.run(from.sender, () =>
      extractPdfText(absolute, file.path, from.workspace, { maxPages: this.settings.pdfMaxPages }),
    );
    if (pdf.scanned)
      return {
        note: `${file.name} is a PDF with no text layer (${pdf.totalPages} page(s), probably scanned), so I cannot read its text; it is saved at ${file.path}.`,
      };
    const read = pdf.pages.length;
    const span = read < pdf.totalPages ? `the first ${read} of ${pdf.totalPages} pages` : `${read} page(s)`;
    const text = capped(pdf.pages.join("\n\n"), this.settings.maxChars, pdf.cachePath);
    return {
      attachment: fileText(file, "pdf", `PDF, ${span}; text extracted, saved at ${pdf.cachePath}`, text),
    };
  }

  private async text(file: InboundFile, absolute: string): Promise<Outcome> {
    if (file.bytes > this.settings.textInlineMaxBytes)
      return {
        attachment: fileNote(
          `${file.name} (${formatBytes(file.bytes)}) is too long to include here; it is saved at ${file.path} — read_file it.`,
        ),
      };
    const handle = await open(absolute, "r");
    // No further than the size judged, though the file may have grown since.
    const content = await readUpTo(handle, file.bytes).finally(() => handle.close());
    const text = capped(content.toString("utf8"), this.settings.maxChars, file.path);
    return {
      attachment: fileText(
        file,
        "text",
        `text file, ${formatBytes(file.bytes)}, saved at ${file.path}`,
        fenced(text, fenceLanguage(file.name)),
      ),
    };
  }
}
