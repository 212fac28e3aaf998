/**
 * One person's PDFs go to the process's PDF reader one at a time: ten PDFs from one sender no
 * longer take every worker slot while anyone else's PDF waits in line (AttachmentIntake keys its
 * PDF reads by sender).
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { InboundFile } from "../../src/core/inbound-message.js";
import type { ThreadTarget } from "../../src/core/thread-target.js";
import { createWorkspacePaths } from "../../src/tools/files/workspace-paths.js";

/** The reads the fake reader started and has not finished, and how to finish them. */
const reader = vi.hoisted(() => ({
  running: [] as { file: string; finish: () => void }[],
  started: [] as string[],
}));
vi.mock("../../src/attachments/pdf-text.js", () => ({
  extractPdfText: (_absolute: string, relative: string) =>
    new Promise((resolve) => {
      reader.started.push(relative);
      const entry = {
        file: relative,
        finish: () => {
          reader.running.splice(reader.running.indexOf(entry), 1);
          resolve({
            totalPages: 1,
            pages: [`text of ${relative}`],
            scanned: false,
            cachePath: `${relative}.txt`,
          });
        },
      };
      reader.running.push(entry);
    }),
}));

const { AttachmentIntake } = await import("../../src/attachments/inbound-attachments.js");

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "pdf-per-sender-"));
  await mkdir(join(root, "uploads/slack_T1_C1/s"), { recursive: true });
  reader.running.length = 0;
  reader.started.length = 0;
});
afterEach(() => rm(root, { recursive: true, force: true }));

const at: ThreadTarget = { platform: "slack", workspace: "T1", channel: "C1", thread: "s" };

async function pdf(name: string): Promise<InboundFile> {
  const path = `uploads/slack_T1_C1/s/${name}`;
  await writeFile(join(root, path), "%PDF-1.4\n");
  return { path, name, bytes: 9 };
}

const upload = (name: string) => `uploads/slack_T1_C1/s/${name}`;
const running = () => reader.running.map((read) => read.file);
/** Mallory's PDFs in the reader now. */
const mallorys = () => running().filter((file) => file.includes("/s/m"));

describe("the PDF reader, shared by everyone", () => {
  it("takes one PDF of a sender at a time, and another sender's beside it", async () => {
    const intake = new AttachmentIntake({
      workspace: createWorkspacePaths({ root }),
      logger: pino({ level: "silent" }),
    });
    const mallory = intake.process([await pdf("m1.pdf"), await pdf("m2.pdf"), await pdf("m3.pdf")], at, "UM");
    await vi.waitFor(() => expect(reader.started).not.toHaveLength(0));
    const alice = intake.process([await pdf("a1.pdf")], at, "UA");
    // Before, all three of Mallory's were in the reader (or its line) at once, ahead of Alice's.
    await vi.waitFor(() => expect(running()).toHaveLength(2));
    expect(running()).toContain(upload("a1.pdf"));
    expect(mallorys()).toHaveLength(1);
    // Each next one of Mallory's starts once the one before is done (her files are read in
    // parallel, so which goes first is whichever was opened first).
    for (let done = 1; done <= 3; done++) {
      reader.running.find((read) => read.file === mallorys()[0])!.finish();
      if (done < 3) await vi.waitFor(() => expect(reader.started).toHaveLength(2 + done));
      expect(mallorys()).toHaveLength(done < 3 ? 1 : 0);
    }
    expect((await mallory).attachments).toHaveLength(3);
    reader.running[0]!.finish();
    expect((await alice).attachments).toHaveLength(1);
    expect(reader.started).toHaveLength(4);
  });
});
