/**
 * Upload gates for channels built by tests and benches: the real gate the channels' end-to-end
 * budget tests give each "process", over the process's own store (so a restart on the same SQLite
 * file keeps the count) with a disk whose free bytes the test sets; and an open one for the rest.
 */
import pino from "pino";
import { createUploadGate, type UploadGate } from "../../src/attachments/upload-gate.js";
import { storeByteBudget } from "../../src/store/byte-budget.js";
import type { Store } from "../../src/store/store.js";

/** Lets every file through: for channels in tests and benches that are not about the budget. */
export const OPEN_UPLOADS: UploadGate = Object.freeze({
  admit: async () => ({ ok: true as const, settle: async () => {}, release: async () => {} }),
});

/** The disk as the gate reads it: a test sets `free`. */
export interface TestDisk {
  free: number;
}

/** A gate allowing `bytesPerPerson` a day and keeping `minFreeBytes` of `disk` free (0: not read). */
export function testUploadGate(
  parts: { readonly store: Store; readonly workspaceRoot: string },
  disk: TestDisk,
  bytesPerPerson: number,
  minFreeBytes: number,
): UploadGate {
  return createUploadGate({
    budget: storeByteBudget(parts.store.space("budgets")),
    bytesPerPerson,
    workspaceRoot: parts.workspaceRoot,
    minFreeBytes,
    freeBytes: async () => disk.free,
    logger: pino({ level: "silent" }),
  });
}
