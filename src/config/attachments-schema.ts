/**
 * The configuration of what people send (config/coworker.yaml `attachments` and `transcription`):
 * caps on the files downloaded and read, how images go to the model, and the endpoint that
 * transcribes voice notes and audio. Its own file beside schema.ts, which assembles the sections.
 */
import { z } from "zod";
import { httpUrl, MB, nonEmpty, nonNegativeInt, positiveInt, timerSeconds } from "./schema-fields.js";

/** What people send: caps for files and how images go to the model. */
export const attachmentsSchema = z.strictObject({
  max_files: positiveInt.default(10),
  max_chars: positiveInt.default(20_000),
  pdf_max_pages: positiveInt.default(50),
  text_inline_max_bytes: positiveInt.default(100 * 1024),
  image_detail: z.enum(["auto", "low", "high"]).default("auto"),
  image_max_bytes: positiveInt.default(8 * MB),
  max_images_per_call: positiveInt.default(8),
  /**
   * Image bytes one model call carries at most, the newest images first: every image of the
   * history rides on every call (OpenAI takes at most 50 MB of images a request; base64 adds a third).
   */
  max_image_bytes_per_call: positiveInt.default(20 * MB),
  /**
   * Bytes of files one person may have saved in a rolling day, across every platform's
   * conversations and every process on the store; a file past it is not downloaded (a note says so).
   */
  daily_upload_bytes_per_person: positiveInt.default(500 * MB),
  /**
   * No file is downloaded while the filesystem holding the workspace would have less free space
   * than this (0: no floor).
   */
  min_free_disk_bytes: nonNegativeInt.default(1024 * MB),
});

/** Voice and audio transcription on an OpenAI-compatible /audio/transcriptions endpoint. */
export const transcriptionSchema = z.strictObject({
  model: nonEmpty.default("whisper-1"),
  base_url: httpUrl.default("https://api.openai.com/v1"),
  api_key: nonEmpty.optional(),
  timeout_s: timerSeconds(positiveInt).default(120),
  /** Longer voice notes and audio (as the platform reports them) are not transcribed. */
  max_duration_s: positiveInt.default(30 * 60),
  /** Voice notes and audio one person may have transcribed per rolling hour. */
  max_per_hour: positiveInt.default(30),
});
