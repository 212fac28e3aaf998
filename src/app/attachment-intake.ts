/**
 * The attachment intake the channels share, built from config: `attachments.*` caps and, when
 * `transcription` is configured, the transcriber for voice notes and audio (its OpenAI SDK client
 * loads with the first transcript). The transcriptions per person are counted in the app's slot
 * budget (AppContext.budget, over the store), so every process on it and every reconnect of a
 * channel (which builds a new intake) share one count.
 */
import type { Logger } from "pino";
import { AttachmentIntake, DEFAULT_ATTACHMENT_SETTINGS } from "../attachments/inbound-attachments.js";
import type { Transcriber } from "../attachments/transcriber.js";
import type { SlotBudget } from "../store/slot-budget.js";
import { storeByteBudget } from "../store/byte-budget.js";
import type { Store } from "../store/store.js";
import { createUploadGate, type UploadGate } from "../attachments/upload-gate.js";
import type { CoworkerConfig } from "../config/schema.js";
import { createWorkspacePaths } from "../tools/files/workspace-paths.js";
import { loadOnFirstUse } from "./load-on-first-use.js";

/** The configured transcriber; the `openai` package loads with its first use. */
function transcriberFromConfig(transcription: NonNullable<CoworkerConfig["transcription"]>): Transcriber {
  const load = loadOnFirstUse(async () =>
    (await import("../attachments/transcriber.js")).openAITranscriber({
      model: transcription.model,
      baseURL: transcription.base_url,
      ...(transcription.api_key ? { apiKey: transcription.api_key } : {}),
      timeoutMs: transcription.timeout_s * 1000,
    }),
  );
  return { transcribe: async (file) => (await load()).transcribe(file) };
}

/**
 * The upload gate every channel asks before it downloads a file: `attachments.daily_upload_bytes_per_person`
 * counted in the store's 'budgets' space (shared by every process on it, kept across restarts)
 * and `attachments.min_free_disk_bytes` on the workspace's filesystem.
 */
export function uploadGateFromConfig(config: CoworkerConfig, store: Store, logger: Logger): UploadGate {
  return createUploadGate({
    budget: storeByteBudget(store.space("budgets")),
    bytesPerPerson: config.attachments.daily_upload_bytes_per_person,
    workspaceRoot: config.workspace.root,
    minFreeBytes: config.attachments.min_free_disk_bytes,
    logger: logger.child({ component: "uploads" }),
  });
}

/** One intake for every channel of the app. */
export function attachmentIntakeFromConfig(
  config: CoworkerConfig,
  logger: Logger,
  serviceFiles: readonly string[],
  budget: SlotBudget,
): AttachmentIntake {
  const { attachments, transcription } = config;
  return new AttachmentIntake({
    // The whole workspace: each message's files are read as its conversation sees it (inbound-attachments.ts).
    workspace: createWorkspacePaths({ root: config.workspace.root, offLimits: serviceFiles }),
    settings: {
      // The intake's own default stands only where nothing transcribes.
      ...DEFAULT_ATTACHMENT_SETTINGS,
      maxFiles: attachments.max_files,
      maxChars: attachments.max_chars,
      pdfMaxPages: attachments.pdf_max_pages,
      textInlineMaxBytes: attachments.text_inline_max_bytes,
      ...(transcription
        ? {
            transcriptionMaxDurationS: transcription.max_duration_s,
            transcriptionsPerHour: transcription.max_per_hour,
          }
        : {}),
    },
    ...(transcription
      ? { transcription: { transcriber: transcriberFromConfig(transcription), budget } }
      : {}),
    logger: logger.child({ component: "attachments" }),
  });
}
