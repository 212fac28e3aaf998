/**
 * An attachment intake whose recordings are transcribed only when the test says so: the
 * transcriber waits on a gate, so a recording holds its sender's hand-over lane (on any channel)
 * for as long as a test needs.
 */
import pino from "pino";
import { tmpdir } from "node:os";
import { AttachmentIntake } from "../../src/attachments/inbound-attachments.js";
import { createStore } from "../../src/store/create-store.js";
import { storeSlotBudget } from "../../src/store/slot-budget.js";
import { createWorkspacePaths } from "../../src/tools/files/workspace-paths.js";

export interface GatedTranscription {
  /** The intake for the channel, reading files into the workspace at `root`. */
  readonly attachments: AttachmentIntake;
  /** Resolves once a transcription has started (and waits on the gate). */
  readonly transcribing: Promise<void>;
  /** Lets every transcription finish ("the recording"). */
  readonly release: () => void;
  /** Closes the store the transcription budget is kept in. */
  readonly close: () => Promise<void>;
}

export async function gatedTranscription(root: string): Promise<GatedTranscription> {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let started!: () => void;
  const transcribing = new Promise<void>((resolve) => {
    started = resolve;
  });
  const store = await createStore({ url: "memory:", dataDir: tmpdir() });
  const attachments = new AttachmentIntake({
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
  });
  return { attachments, transcribing, release, close: () => store.close() };
}
