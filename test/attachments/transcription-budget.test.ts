/**
 * The hourly transcription budget counted in the store: intakes of several processes sharing one
 * store (the memory store for the rule; two connections to one SQLite file and to a real
 * redis-server for the atomic claims) together transcribe at most one person's budget in the
 * hour, in the order the recordings were attached, and the units come back once the hour is over.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pino from "pino";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { AttachmentIntake, DEFAULT_ATTACHMENT_SETTINGS } from "../../src/attachments/inbound-attachments.js";
import type { Transcriber } from "../../src/attachments/transcriber.js";
import type { Attachment } from "../../src/core/attachment.js";
import type { InboundFile } from "../../src/core/inbound-message.js";
import type { ThreadTarget } from "../../src/core/thread-target.js";
import { uploadFolderOf } from "../../src/core/upload-folders.js";
import { createStore } from "../../src/store/create-store.js";
import { storeSlotBudget } from "../../src/store/slot-budget.js";
import type { Store } from "../../src/store/store.js";
import { createWorkspacePaths } from "../../src/tools/files/workspace-paths.js";
import { type RedisServer, startRedisServer } from "../support/redis-server.js";

const logger = pino({ level: "silent" });
const chat: ThreadTarget = { platform: "telegram", workspace: "", channel: "42" };
/** The chat's upload folder: the intake reads only its own conversation's uploads. */
const FOLDER = uploadFolderOf(chat);
let root: string;
const opened: Store[] = [];

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "budget-"));
  await mkdir(join(root, FOLDER), { recursive: true });
});
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(opened.splice(0).map((store) => store.close()));
  await rm(root, { recursive: true, force: true });
});

async function open(url: string | undefined, dataDir: string): Promise<Store> {
  const store = await createStore({ url, dataDir });
  opened.push(store);
  return store;
}

/** A transcriber that answers "words" and records the names of the files it was sent. */
function recordingTranscriber(): { sent: string[]; transcriber: Transcriber } {
  const sent: string[] = [];
  return {
    sent,
    transcriber: {
      transcribe: async ({ name }) => {
        sent.push(name);
        return "words";
      },
    },
  };
}

/** An intake (one process's) counting in `store`. */
function intake(
  store: Store,
  perHour: number,
  transcriber: Transcriber,
  windowMs?: number,
): AttachmentIntake {
  return new AttachmentIntake({
    workspace: createWorkspacePaths({ root }),
    settings: { ...DEFAULT_ATTACHMENT_SETTINGS, transcriptionsPerHour: perHour },
    logger,
    transcription: {
      transcriber,
      budget: storeSlotBudget(store.space("budgets"), windowMs === undefined ? {} : { windowMs }),
    },
  });
}

async function voice(name: string, bytes = 10): Promise<InboundFile> {
  const path = `${FOLDER}/${name}`;
  const content = Buffer.alloc(bytes, "OggS audio");
  await writeFile(join(root, path), content);
  return { path, name, bytes, mediaType: "audio/ogg", durationS: 5 };
}

/** The service's lines only the model gets about a message's files (file-note records). */
const modelNotes = (result: { attachments: readonly Attachment[] }) =>
  result.attachments.flatMap((a) => (a.kind === "file-note" ? [a.text] : []));

/** How many recordings a message's notes refuse for the person's hourly budget. */
const refused = (result: { attachments: readonly Attachment[] }) =>
  modelNotes(result).filter((note) => note.includes("transcribed in the last hour, the most one person may"))
    .length;

/**
 * `count` one-recording messages from person 7, spread over `intakes` and all sent at once: how
 * many were sent to the transcriber, after checking that every other one was refused for the budget.
 */
async function burst(intakes: readonly AttachmentIntake[], count: number, tag: string, sent: string[]) {
  const before = sent.length;
  const files = await Promise.all(Array.from({ length: count }, (_, i) => voice(`${tag}-${i}.ogg`)));
  const results = await Promise.all(
    files.map((file, i) => intakes[i % intakes.length]!.process([file], chat, "7")),
  );
  const transcribed = sent.length - before;
  expect(results.reduce((sum, result) => sum + refused(result), 0)).toBe(count - transcribed);
  return transcribed;
}

describe("the transcription budget in a shared store", () => {
  it("two intakes on one store transcribe one person's budget between them, and the units come back after the hour", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.parse("2026-12-05T10:00:00Z"));
    const store = await open("memory:", root);
    const { sent, transcriber } = recordingTranscriber();
    const [a, b] = [intake(store, 3, transcriber), intake(store, 3, transcriber)];

    expect(await burst([a, b], 8, "first", sent)).toBe(3);
    // Another person has their own budget, on either intake.
    await b.process([await voice("other.ogg")], chat, "8");
    expect(sent).toHaveLength(4);

    vi.setSystemTime(Date.parse("2026-12-05T10:59:59Z"));
    expect(await burst([a, b], 2, "within", sent)).toBe(0);
    vi.setSystemTime(Date.parse("2026-12-05T11:00:00.001Z"));
    expect(await burst([a, b], 8, "next", sent)).toBe(3);
  });

  it("takes the shared budget in the order the recordings were attached, whichever intake took the rest", async () => {
    const store = await open("memory:", root);
    const { sent, transcriber } = recordingTranscriber();
    const [a, b] = [intake(store, 3, transcriber), intake(store, 3, transcriber)];
    await b.process([await voice("elsewhere.ogg")], chat, "7");
    // Big recordings first: their reads finish last, yet they take the two units left.
    const files = [
      await voice("first.ogg", 200_000),
      await voice("second.ogg", 50_000),
      await voice("third.ogg"),
      await voice("fourth.ogg"),
    ];
    const result = await a.process(files, chat, "7");
    expect(sent).toEqual(["elsewhere.ogg", "first.ogg", "second.ogg"]);
    expect(modelNotes(result)).toEqual([
      expect.stringMatching(/^\[voice\/audio third\.ogg, 0:05 — not transcribed: its sender has had 3/),
      expect.stringMatching(/^\[voice\/audio fourth\.ogg, 0:05 — not transcribed: its sender has had 3/),
    ]);
  });

  it("sends nothing to the paid endpoint when the count cannot be checked", async () => {
    const store = await createStore({ url: "memory:", dataDir: root });
    const { sent, transcriber } = recordingTranscriber();
    const voices = intake(store, 3, transcriber);
    await store.close();
    const file = await voice("lost.ogg");
    expect(modelNotes(await voices.process([file], chat, "7"))).toEqual([
      `[voice/audio lost.ogg, 0:05 — not transcribed: how many its sender has had transcribed could not be checked just now. The file is saved at ${file.path}.]`,
    ]);
    expect(sent).toEqual([]);
  });
});

/** Two connections to one backend, as two processes would have, with the hour shortened. */
describe.each([
  {
    name: "two connections to one SQLite file",
    openTwo: async (dataDir: string) => [await open(undefined, dataDir), await open(undefined, dataDir)],
  },
  {
    name: "two connections to one redis-server",
    openTwo: async (dataDir: string) => [await open(redis!.url, dataDir), await open(redis!.url, dataDir)],
  },
])("processes on $name", ({ openTwo }) => {
  const windowMs = 1_500;

  it("transcribe at most one person's budget between them in the window, and again after it", async () => {
    const [one, two] = await openTwo(join(root, "data"));
    const { sent, transcriber } = recordingTranscriber();
    const intakes = [intake(one!, 3, transcriber, windowMs), intake(two!, 3, transcriber, windowMs)];
    expect(await burst(intakes, 10, "first", sent)).toBe(3);
    await sleep(windowMs + 100);
    expect(await burst(intakes, 10, "again", sent)).toBe(3);
  });
});

let redis: RedisServer | undefined;
beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(async () => {
  await redis?.stop();
});
