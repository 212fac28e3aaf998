/**
 * Voice and audio transcription through an OpenAI-compatible `POST /audio/transcriptions`
 * endpoint (OpenAI, Groq, a local whisper server): multipart `file` + `model`, on the `openai`
 * SDK that already talks to the chat model. Only built when `transcription` is configured.
 */
import { readFile } from "node:fs/promises";
import OpenAI, { toFile } from "openai";

/** Turns one audio file into text. */
export interface Transcriber {
  /** The transcript (trimmed; may be empty for silence). Throws with a short reason on failure. */
  transcribe(file: {
    readonly absolute: string;
    readonly name: string;
    readonly mediaType?: string;
  }): Promise<string>;
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
      const data = await readFile(file.absolute);
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
