/**
 * A harness whose voice notes are transcribed only when the test says so: the transcriber waits
 * on a gate, so a recording holds its sender's hand-over lane for as long as a test needs.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { AttachmentIntake } from "../../../src/attachments/inbound-attachments.js";
import type { TelegramChannelOptions } from "../../../src/channels/telegram/telegram-channel.js";
import { createStore } from "../../../src/store/create-store.js";
import { storeSlotBudget } from "../../../src/store/slot-budget.js";
import { createWorkspacePaths } from "../../../src/tools/files/workspace-paths.js";
import { type Harness, startHarness } from "./harness.js";

export interface SlowRecording {
  readonly h: Harness;
  /** Resolves once a transcription has started (and waits on the gate). */
  readonly transcribing: Promise<void>;
  /** Lets every transcription finish. */
  readonly release: () => void;
  readonly close: () => Promise<void>;
}

/** A voice note as the fake sends it. */
export const VOICE = { content: Buffer.from("OggS fake opus"), duration: 3 } as const;

export async function startWithSlowRecording(
  overrides: Partial<TelegramChannelOptions> = {},
): Promise<SlowRecording> {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let started!: () => void;
  const transcribing = new Promise<void>((resolve) => {
    started = resolve;
  });
  const store = await createStore({ url: "memory:", dataDir: tmpdir() });
  const root = await mkdtemp(join(tmpdir(), "tg-slow-rec-"));
  const h = await startHarness({
    workspaceRoot: root,
    attachments: new AttachmentIntake({
      workspace: createWorkspacePaths({ root }),
      logger: pino({ level: "silent" }),
      transcription: {
        transcriber: {
          transcribe: async () => {
            started();
            await gate;
            return "the recording";
          },
        },
        budget: storeSlotBudget(store.space("budgets")),
      },
    }),
    ...overrides,
  });
  return {
    h,
    transcribing,
    release,
    close: async () => {
      release();
      await h.close();
      await store.close();
    },
  };
}
