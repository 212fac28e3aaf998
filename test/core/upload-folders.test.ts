/**
 * The uploads layout: one folder per conversation, named by its ids so that no two conversations
 * share one, with its threads' folders inside; the per-session folders the Slack and Telegram
 * channels made before it belong to their conversation and to no other.
 */
import { describe, expect, it } from "vitest";
import { perSessionUploadFolder } from "../support/per-session-upload-folder.js";
import { sessionKeyOf, type ThreadTarget } from "../../src/core/thread-target.js";
import {
  conversationUploadFolder,
  isConversationUploadFolder,
  uploadFolderOf,
} from "../../src/core/upload-folders.js";

const DM: ThreadTarget = { platform: "slack", workspace: "T1", channel: "D1", thread: "1700000000.000100" };
const GROUP: ThreadTarget = { platform: "telegram", workspace: "tg", channel: "-100123", thread: "42" };

/** How the Telegram channel named a session's folder before the per-conversation layout. */
const oldTelegramFolder = (target: ThreadTarget) => sessionKeyOf(target).replace(/[^\w-]/g, "_");

describe("uploadFolderOf", () => {
  it("puts a thread's or topic's files in its conversation's folder", () => {
    expect(uploadFolderOf(DM)).toBe("uploads/slack_T1_D1/1700000000.000100");
    expect(uploadFolderOf(GROUP)).toBe("uploads/telegram_tg_-100123/42");
    expect(uploadFolderOf({ ...GROUP, thread: undefined })).toBe("uploads/telegram_tg_-100123/-");
  });

  it("spells any other character of an id so that distinct conversations keep distinct folders", () => {
    const a = conversationUploadFolder({ platform: "p", workspace: "w_x", channel: "c" });
    const b = conversationUploadFolder({ platform: "p", workspace: "w", channel: "x_c" });
    expect([a, b]).toEqual(["p_w%5fx_c", "p_w_x%5fc"]);
    expect(uploadFolderOf({ platform: "p", workspace: "..", channel: "a/b", thread: ".." })).toBe(
      "uploads/p_%2e._a%2fb/%2e.",
    );
    expect(conversationUploadFolder({ platform: "p", workspace: "w", channel: "é" })).toBe("p_w_%c3%a9");
  });
});

describe("isConversationUploadFolder", () => {
  it("gives each conversation its folder and its threads' folders from before the layout", () => {
    const later = { ...DM, thread: "1700000900.000900" };
    expect(isConversationUploadFolder("slack_T1_D1", later)).toBe(true);
    expect(isConversationUploadFolder(perSessionUploadFolder(DM), later)).toBe(true);
    expect(isConversationUploadFolder(perSessionUploadFolder({ ...DM, thread: undefined }), later)).toBe(
      true,
    );
    const topic = { ...GROUP, thread: "7" };
    expect(isConversationUploadFolder(oldTelegramFolder(GROUP), topic)).toBe(true);
    expect(isConversationUploadFolder(oldTelegramFolder({ ...GROUP, thread: undefined }), topic)).toBe(true);
  });

  it("gives no conversation another's folder, nor one whose id only starts the same", () => {
    const other = { ...DM, channel: "D12" };
    for (const name of ["slack_T1_D1", perSessionUploadFolder(DM), "slack_T1_D", "uploads", ".."])
      expect(isConversationUploadFolder(name, other)).toBe(false);
    expect(isConversationUploadFolder(oldTelegramFolder(GROUP), { ...GROUP, channel: "100123" })).toBe(false);
    expect(isConversationUploadFolder(perSessionUploadFolder(DM), { ...DM, platform: "telegram" })).toBe(
      false,
    );
  });

  it("recognises old folders only for ids the old names spelled alike", () => {
    const odd: ThreadTarget = { platform: "p", workspace: "w", channel: "a.b" };
    expect(isConversationUploadFolder("p_w_a.b", odd)).toBe(true);
    expect(isConversationUploadFolder("p_w_a.b_-", odd)).toBe(false);
  });
});
