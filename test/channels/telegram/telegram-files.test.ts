/**
 * Files people send, saved into the workspace the agent's shell can change: a link it planted
 * where a file goes (message ids are predictable) or in place of the session's uploads folder is
 * never written through.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Api } from "grammy";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  attachmentOf,
  TelegramFiles,
  type TelegramFilesOptions,
} from "../../../src/channels/telegram/telegram-files.js";
import {
  type TelegramMessage,
  telegramMessageSchema,
} from "../../../src/channels/telegram/telegram-inbound.js";
import type { ThreadTarget } from "../../../src/core/thread-target.js";
import { createWorkspacePaths } from "../../../src/tools/files/workspace-paths.js";
import {
  FILE_DOWNLOAD,
  type FakeTelegram,
  startFakeTelegram,
} from "../../fakes/fake-telegram/fake-telegram.js";
import { OPEN_UPLOADS } from "../../support/test-upload-gate.js";

const CHAT = { id: 4242, type: "private" as const, first_name: "Ana" };
const USER = { id: 4242, is_bot: false, first_name: "Ana" };
const TARGET: ThreadTarget = { platform: "telegram", workspace: "tg", channel: String(CHAT.id) };
const FOLDER = "uploads/telegram_tg_4242/-";

let tg: FakeTelegram;
let root: string;
let outside: string;
let files: TelegramFiles;

beforeEach(async () => {
  tg = await startFakeTelegram();
  root = await mkdtemp(join(tmpdir(), "tg-files-"));
  outside = await mkdtemp(join(tmpdir(), "outside-"));
  files = telegramFiles();
});
afterEach(async () => {
  await tg.close();
  await rm(root, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

/** TelegramFiles on the fake, saving into `root` (1 MB cap), with `options` over those. */
function telegramFiles(options: Partial<TelegramFilesOptions> = {}): TelegramFiles {
  return new TelegramFiles({
    api: new Api(tg.token, { apiRoot: tg.apiRoot }),
    token: tg.token,
    apiRoot: tg.apiRoot,
    workspace: createWorkspacePaths({ root }),
    maxBytes: 1_048_576,
    uploads: OPEN_UPLOADS,
    ...options,
  });
}

function sendDocument(name: string, content: string): TelegramMessage {
  const input = {
    chat: CHAT,
    from: USER,
    document: { content: Buffer.from(content), name, mime: "text/plain" },
  };
  return telegramMessageSchema.parse(tg.sendUserMessage(input).message);
}

describe("TelegramFiles", () => {
  it("saves a document under the session's uploads folder", async () => {
    const message = sendDocument("notes.txt", "my notes");
    const saved = await files.download(message, TARGET);
    const path = `${FOLDER}/${message.message_id}-notes.txt`;
    expect(saved).toEqual({
      files: [{ path, name: "notes.txt", bytes: 8, mediaType: "text/plain" }],
      notes: [],
    });
    expect(await readFile(join(root, path), "utf8")).toBe("my notes");
  });

  it("gives up on a download Telegram never answers, with a note, at the download deadline", async () => {
    files = telegramFiles({ downloadTimeoutMs: 200 });
    tg.holdNext(FILE_DOWNLOAD);
    const saved = await files.download(sendDocument("notes.txt", "my notes"), TARGET);
    expect(saved).toEqual({
      files: [],
      notes: ["notes.txt could not be saved: the download took longer than 0.2 s."],
    });
  });

  it("refuses a document named like a credential, as the file tools do, with a note", async () => {
    const saved = await files.download(sendDocument("deploy.pem", "-----BEGIN PRIVATE KEY-----"), TARGET);
    expect(saved).toEqual({
      files: [],
      notes: [
        "deploy.pem could not be saved: it is named like a credential file (a private key, .env, …), and credentials stay out of the workspace.",
      ],
    });
  });

  it("never writes through a link planted at the file's predictable name", async () => {
    const victim = join(outside, "authorized_keys");
    await writeFile(victim, "the real key");
    const message = sendDocument("notes.txt", "ssh-ed25519 AAAA attacker");
    await mkdir(join(root, FOLDER), { recursive: true });
    await symlink(victim, join(root, FOLDER, `${message.message_id}-notes.txt`));
    const saved = await files.download(message, TARGET);
    expect(saved.files).toEqual([]);
    expect(saved.notes).toEqual([
      expect.stringMatching(/^notes\.txt could not be saved: .*outside the workspace/),
    ]);
    expect(await readFile(victim, "utf8")).toBe("the real key");
  });

  it("never writes into a folder outside the workspace that the chat's uploads folder was made a link to", async () => {
    await mkdir(join(root, "uploads"), { recursive: true });
    await symlink(outside, join(root, "uploads/telegram_tg_4242"));
    const saved = await files.download(sendDocument("notes.txt", "dropped"), TARGET);
    expect(saved.files).toEqual([]);
    expect(saved.notes).toEqual([expect.stringMatching(/^notes\.txt could not be saved: /)]);
    expect(await readdir(outside)).toEqual([]);
  });

  it("never writes into another chat's uploads that the chat's folder was made a link to", async () => {
    const message = sendDocument("notes.txt", "overwritten");
    const theirs = join(root, "uploads/telegram_tg_-100/-", `${message.message_id}-notes.txt`);
    await mkdir(join(root, "uploads/telegram_tg_-100/-"), { recursive: true });
    await writeFile(theirs, "theirs");
    await mkdir(join(root, "uploads/telegram_tg_4242"), { recursive: true });
    await symlink("../telegram_tg_-100/-", join(root, FOLDER));
    const saved = await files.download(message, TARGET);
    expect(saved.files).toEqual([]);
    expect(saved.notes).toEqual([
      expect.stringMatching(/^notes\.txt could not be saved: .*only this conversation's own folders/),
    ]);
    expect(await readFile(theirs, "utf8")).toBe("theirs");
  });
});

describe("whose voice a recording is", () => {
  const base = { message_id: 7, date: 1_700_000_000, chat: CHAT, from: USER };
  const sound = { file_id: "f1", file_unique_id: "u1", duration: 4 };
  const parse = (extra: object): TelegramMessage => telegramMessageSchema.parse({ ...base, ...extra });

  it("a voice message the sender recorded is theirs; a forwarded one or an audio file is not", () => {
    expect(attachmentOf(parse({ voice: sound }), 1_000_000)?.ownVoice).toBe(true);
    const forwarded = { forward_origin: { type: "user", date: 1_699_999_000, sender_user: USER } };
    expect(attachmentOf(parse({ voice: sound, ...forwarded }), 1_000_000)?.ownVoice).toBe(false);
    expect(attachmentOf(parse({ voice: sound, forward_date: 1_699_999_000 }), 1_000_000)?.ownVoice).toBe(
      false,
    );
    expect(attachmentOf(parse({ audio: sound }), 1_000_000)?.ownVoice).toBe(false);
  });

  it("a voice message sent through an inline bot is that bot's clip, not the sender's voice", () => {
    const viaBot = { via_bot: { id: 4242, is_bot: true, first_name: "Clips", username: "clipsbot" } };
    expect(attachmentOf(parse({ voice: sound, ...viaBot }), 1_000_000)?.ownVoice).toBe(false);
  });
});
