/**
 * The attachment intake the channels share, built from config: `attachments.*` caps and, when
 * `transcription` is configured, the transcriber for voice notes and audio.
 */
import type { Logger } from "pino";
import { AttachmentIntake } from "../attachments/inbound-attachments.js";
import { openAITranscriber } from "../attachments/transcriber.js";
import type { CoworkerConfig } from "../config/schema.js";

/** One intake for every channel of the app. */
export function attachmentIntakeFromConfig(config: CoworkerConfig, logger: Logger): AttachmentIntake {
  const { attachments, transcription } = config;
  return new AttachmentIntake({
    workspaceRoot: config.workspace.root,
    settings: {
      maxFiles: attachments.max_files,
      maxChars: attachments.max_chars,
      pdfMaxPages: attachments.pdf_max_pages,
      textInlineMaxBytes: attachments.text_inline_max_bytes,
    },
    ...(transcription
      ? {
          transcriber: openAITranscriber({
            model: transcription.model,
            baseURL: transcription.base_url,
            ...(transcription.api_key ? { apiKey: transcription.api_key } : {}),
            timeoutMs: transcription.timeout_s * 1000,
          }),
        }
      : {}),
    logger: logger.child({ component: "attachments" }),
  });
}
