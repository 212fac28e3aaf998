/**
 * Voice and audio transcription through an OpenAI-compatible `POST /audio/transcriptions`
 * endpoint (OpenAI, Groq, a local whisper server): multipart `file` + `model`, on the `openai`
 * SDK that already talks to the chat model. Only built when `transcription` is configured.
 * The file is read only up to the size the intake allowed, judged on the file as it is when read:
 * the uploads folder is the conversation's shell's to write, and a command there can grow a
 * recording after it was checked.
 */
import { open } from "node:fs/promises";
import OpenAI, { toFile } from "openai";
import { formatBytes } from "../core/attachment.js";
import { readUpTo } from "../tools/files/anchored-fs.js";

/** Turns one audio file into text. */
export interface Transcriber {
  /** The transcript (trimmed; may be empty for silence). Throws with a short reason on failure. */
  transcribe(file: {
    readonly absolute: string;
    readonly name: string;
    readonly mediaType?: string;
    /** The most bytes sent: a file larger than this now is refused, unread. */
    readonly maxBytes: number;
  }): Promise<string>;
}

/** The recording's bytes, at most `maxBytes` of them; throws with a short reason when it is larger. */
async function readRecording(absolute: string, maxBytes: number): Promise<Buffer> {
  const handle = await open(absolute, "r");
  try {
    const { size } = await handle.stat();
    if (size > maxBytes)
      throw new Error(
        `it is ${formatBytes(size)} now, more than the ${formatBytes(maxBytes)} it was checked for`,
      );
    return await readUpTo(handle, size);
  } finally {
    await handle.close();
  }
}

export interface TranscriptionSettings {
  readonly model: string;
  /** e.g. https://api.openai.com/v1, https://api.groq.com/openai/v1, http://localhost:8000/v1 */
  readonly baseURL: string;
  readonly apiKey?: string;
  readonly timeoutMs?: number;
}

/** A Transcriber on an OpenAI-compatible endpoint. */
export function openAITranscriber(settings: TranscriptionSettings): Transcriber {
  // The key is the configuration's (transcription.api_key), registered with the redactor at start.
  const client = new OpenAI({
    baseURL: settings.baseURL.replace(/\/+$/, ""),
    apiKey: settings.apiKey ?? "no-key",
    maxRetries: 1,
    timeout: settings.timeoutMs ?? 120_000,
    logLevel: "off",
  });
  return {
    async transcribe(file) {
      const data = await readRecording(file.absolute, file.maxBytes);
      const upload = await toFile(data, file.name, file.mediaType ? { type: file.mediaType } : undefined);
      try {
        const result = await client.audio.transcriptions.create({ file: upload, model: settings.model });
        return result.text.trim();
      } catch (error) {
        const status = error instanceof OpenAI.APIError ? error.status : undefined;
        throw new Error(
          status !== undefined
            ? `the transcription service answered HTTP ${status}`
            : "the transcription service could not be reached",
          { cause: error },
        );
      }
    },
  };
}
