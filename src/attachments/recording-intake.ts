/**
 * What a voice note or audio file becomes: whether it may be transcribed, and its transcript or
 * the note saying why not. Kept apart from the rest of a message's files (inbound-attachments.ts)
 * because transcription is a paid call billed by the minute, and everything here is about bounding
 * that spend: a recording is refused when its stated length or its size is over the cap, and one
 * person's transcriptions per hour are counted, taken in the order the person attached the
 * recordings. A refused recording becomes a file-note record the model sees (its file is saved);
 * without transcription configured, the hint how to enable it is given once per conversation.
 *
 * Only the transcript of a voice note the sender recorded themselves (`InboundFile.ownVoice`)
 * joins their message as their words, headed by its length alone; any other recording's
 * transcript is a file's content, a file-text record.
 *
 * A transcript is kept to `maxChars` characters, as a PDF's text and a text file are: the size
 * bound lets a low-bitrate recording run hours (a 14 MB Opus file at 6 kbit/s is five), and its
 * whole transcript, some 300,000 characters, went into the message and every request after it. A
 * longer one is saved beside the recording (`<recording>.txt`, as the service saves files:
 * service-file-access.ts, in the conversation's view) and the cut says where to read the rest.
 */
import type { Logger } from "pino";
import { type Attachment, fileNote, formatBytes } from "../core/attachment.js";
import { formatDuration } from "../core/duration-text.js";
import type { InboundFile } from "../core/inbound-message.js";
import { LruCache } from "../core/lru-cache.js";
import type { SlotBudget } from "../store/slot-budget.js";
import { clipWithMarker } from "../core/surrogate-pairs.js";
import { saveInWorkspace } from "../tools/files/service-file-access.js";
import type { WorkspacePaths } from "../tools/files/workspace-paths.js";
import type { BudgetTurn } from "./budget-turns.js";
import type { Transcriber } from "./transcriber.js";

/** What transcribes voice notes and audio, and where the transcriptions are counted. */
export interface IntakeTranscription {
  readonly transcriber: Transcriber;
  /**
   * Where the transcriptions per person are counted (store/slot-budget.ts, under the key
   * `transcription:<person>`): the app's budget over the store, shared by every process on it.
   */
  readonly budget: SlotBudget;
}

export const TRANSCRIPTION_HINT =
  "Voice notes are not transcribed yet: set `transcription` (model, base_url, api_key) in the config, or COWORKER_TRANSCRIPTION_MODEL / _BASE_URL / _API_KEY, to turn them into text.";

/**
 * The bytes per second the size bound takes any recording to have, whatever length it states:
 * 64 kbit/s, above what voice codecs record speech at (Opus ~16–32 kbit/s, AMR and AAC voice
 * presets ~12–64 kbit/s), so a recording within the length cap is rarely refused (music or
 * high-bitrate audio may be); one at a lower bitrate may run longer than the cap (by the ratio of
 * the bitrates) but no longer without bound, whatever length its sender's client claims.
 */
const AUDIO_BYTES_PER_S_BOUND = 64_000 / 8;

export interface RecordingIntakeOptions {
  /** Absent when transcription is not configured: recordings are then only noted. */
  readonly transcription?: IntakeTranscription | undefined;
  /** `AttachmentSettings.transcriptionMaxDurationS`. */
  readonly maxDurationS: number;
  /** `AttachmentSettings.transcriptionsPerHour`. */
  readonly perHour: number;
  /** `AttachmentSettings.maxChars`: the most characters of a transcript included. */
  readonly maxChars: number;
  readonly logger: Logger;
}

/** What one recording yields: the sender's words, a record for the model, and maybe the hint. */
export interface RecordingOutcome {
  readonly section?: string;
  readonly attachment?: Attachment;
  readonly hint?: string;
}

function duration(seconds: number | undefined): string {
  if (seconds === undefined) return "";
  return `, ${Math.floor(seconds / 60)}:${String(Math.round(seconds % 60)).padStart(2, "0")}`;
}

/** Turns saved recordings into transcripts, within the bounds (see the module header). */
export class RecordingIntake {
  private readonly hinted = new LruCache<string, true>(10_000);

  constructor(private readonly options: RecordingIntakeOptions) {}

  /**
   * The recording `file`, open at `absolute`, sent in the conversation `from.sessionKey` by
   * `from.sender` (platform-qualified), whose view of the workspace is `from.workspace`. Passes
   * `turn` once its budget is settled.
   */
  async take(
    file: InboundFile,
    absolute: string,
    from: { readonly sessionKey: string; readonly sender: string; readonly workspace: WorkspacePaths },
    turn: BudgetTurn,
  ): Promise<RecordingOutcome> {
    const label = `${file.name}${duration(file.durationS)}`;
    const transcription = this.options.transcription;
    if (!transcription) {
      const first = !this.hinted.get(from.sessionKey);
      this.hinted.set(from.sessionKey, true);
      const note = fileNote(
        `[voice/audio ${label} — not transcribed: transcription is not configured. The file is saved at ${file.path}.]`,
      );
      return first ? { hint: TRANSCRIPTION_HINT, attachment: note } : { attachment: note };
    }
    const longest = this.options.maxDurationS;
    if (file.durationS !== undefined && file.durationS > longest)
      return {
        attachment: fileNote(
          `[voice/audio ${label} — not transcribed: it is longer than the ${formatDuration(longest * 1_000)} transcription takes. The file is saved at ${file.path}.]`,
        ),
      };
    // A recording must fit both: its stated length (above) and its size, as a stated length is
    // only what the sender's client says.
    const largest = longest * AUDIO_BYTES_PER_S_BOUND;
    if (file.bytes > largest) {
      const why =
        file.durationS === undefined
          ? `its length is not stated, and at ${formatBytes(file.bytes)} it is probably longer than the ${formatDuration(longest * 1_000)} transcription takes (it takes up to ${formatBytes(largest)} of audio with no stated length)`
          : `at ${formatBytes(file.bytes)} it is probably longer than the ${formatDuration(longest * 1_000)} transcription takes, whatever length it states (it takes up to ${formatBytes(largest)} of audio)`;
      return {
        attachment: fileNote(
          `[voice/audio ${label} — not transcribed: ${why}. The file is saved at ${file.path}.]`,
        ),
      };
    }
    // The budget is taken in the order the person attached the recordings: over it, the first
    // ones are transcribed and the later ones refused, whichever file was read first.
    await turn.ready;
    const perHour = this.options.perHour;
    const granted = await transcription.budget.take(`transcription:${from.sender}`, perHour).then(
      (taken) => taken.ok,
      (error: unknown) => {
        // Not counted, not sent: a paid call goes out only once it is counted.
        this.options.logger.warn(
          { err: error, file: file.path },
          "transcription budget could not be checked",
        );
        return undefined;
      },
    );
    const transcribing = granted
      ? transcription.transcriber.transcribe({
          absolute,
          name: file.name,
          maxBytes: largest,
          ...(file.mediaType ? { mediaType: file.mediaType } : {}),
        })
      : undefined;
    // Sent (or refused) before the next recording's turn, so they also reach the service in order.
    turn.pass();
    if (granted === undefined)
      return {
        attachment: fileNote(
          `[voice/audio ${label} — not transcribed: how many its sender has had transcribed could not be checked just now. The file is saved at ${file.path}.]`,
        ),
      };
    if (!transcribing)
      return {
        attachment: fileNote(
          `[voice/audio ${label} — not transcribed: its sender has had ${perHour} transcribed in the last hour, the most one person may. The file is saved at ${file.path}.]`,
        ),
      };
    const spoken = await transcribing;
    const transcript = spoken.trim();
    const said =
      transcript === "" ? "(no speech recognised)" : await this.capped(transcript, file, from.workspace);
    // The sender's own voice note is their words; any other recording is a file's content.
    // Headed by its length alone: the file (name and path) is listed beside the words.
    if (file.ownVoice) return { section: `[voice transcript${duration(file.durationS)}]\n${said}` };
    return {
      attachment: {
        kind: "file-text",
        path: file.path,
        name: file.name,
        source: "audio",
        about: `${label}, transcribed; saved at ${file.path}`,
        text: said,
      },
    };
  }

  /**
   * `transcript` kept to `maxChars` characters; a longer one is saved whole beside the recording,
   * and the cut says where (or, when it could not be saved, that the rest was left out).
   */
  private async capped(transcript: string, file: InboundFile, workspace: WorkspacePaths): Promise<string> {
    const { maxChars } = this.options;
    if (transcript.length <= maxChars) return transcript;
    const whole = `${file.path}.txt`;
    const saved = await saveInWorkspace(workspace, whole, transcript).then(
      () => true,
      (error: unknown) => {
        this.options.logger.warn({ err: error, file: whole }, "a long transcript could not be saved");
        return false;
      },
    );
    return clipWithMarker(transcript, maxChars, (dropped) =>
      saved
        ? `\n… [${dropped} more characters of the transcript; read_file ${whole} for the rest]`
        : `\n… [${dropped} more characters of the transcript were left out]`,
    );
  }
}
