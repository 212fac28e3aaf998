/**
 * A harness whose voice notes are transcribed only when the test says so: the transcriber waits
 * on a gate, so a recording holds its sender's hand-over lane for as long as a test needs.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TelegramChannelOptions } from "../../../src/channels/telegram/telegram-channel.js";
import { gatedTranscription } from "../../support/gated-transcription.js";
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
  const root = await mkdtemp(join(tmpdir(), "tg-slow-rec-"));
  const gated = await gatedTranscription(root);
  const h = await startHarness({ workspaceRoot: root, attachments: gated.attachments, ...overrides });
  return {
    h,
    transcribing: gated.transcribing,
    release: gated.release,
    close: async () => {
      gated.release();
      await h.close();
      await gated.close();
    },
  };
}
