/**
 * Where the files people send are kept in the shared workspace, and whose they are. Every
 * conversation — one Slack channel or DM, one Telegram chat, on one platform and workspace — has
 * one folder under uploads/, named by its ids: uploads/<platform>_<workspace>_<channel>/, with one
 * folder per thread or forum topic inside (uploads/slack_T1_D1/1700000000.000100/). What a
 * session may see of uploads/ is its own conversation's folder, so the rule is a check of the first
 * folder below uploads/ (tools/files/conversation-paths.ts, and the shell's sandbox).
 *
 * Before this layout each session had its own folder, named after its whole session key
 * (uploads/slack_T1_D1_1700000000.000100/, uploads/telegram_tg_4242_-/). Such a folder still
 * belongs to its conversation: its name is the conversation's folder name, "_" and the thread.
 * The two channels made those names differently — Slack kept ".", Telegram made it "_" — but
 * alike for letters, digits and "-", all that Slack and Telegram platform, workspace and channel
 * ids hold; a conversation with any other character in those ids has no old folders recognised.
 */
import type { ThreadTarget } from "./thread-target.js";

/** The workspace folder the channels save received files in. */
export const UPLOADS_FOLDER = "uploads";

/** The thread folder of a session that is one per chat (no thread or topic). */
const NO_THREAD = "-";

/** Ids the old per-session folder names spelled the same on every platform (module comment). */
const PLAIN_ID = /^[A-Za-z0-9-]+$/;

/**
 * One id as part of a folder name: letters, digits, "." and "-" kept, except a leading "."; any
 * other character as "%" and its UTF-8 bytes in hex. Distinct ids stay distinct and no part holds
 * "_", which joins the parts.
 */
function namePart(id: string): string {
  return id.replace(/[^A-Za-z0-9.-]|^\./gu, (character) =>
    Array.from(new TextEncoder().encode(character), (byte) => `%${byte.toString(16).padStart(2, "0")}`).join(
      "",
    ),
  );
}

/** The name of a conversation's folder under uploads/ ("slack_T1_D1"); its threads share it. */
export function conversationUploadFolder(target: ThreadTarget): string {
  return [target.platform, target.workspace, target.channel].map(namePart).join("_");
}

/**
 * The workspace-relative folder a session saves received files in: uploads/, its conversation's
 * folder, then its thread's or topic's ("-" for none). Always "/"-separated.
 */
export function uploadFolderOf(target: ThreadTarget): string {
  const thread = target.thread === undefined ? NO_THREAD : namePart(target.thread);
  return [UPLOADS_FOLDER, conversationUploadFolder(target), thread].join("/");
}

/**
 * Whether the folder `name`, directly under uploads/, belongs to `target`'s conversation: its
 * conversation folder, or a per-session folder of one of its threads from before this layout.
 */
export function isConversationUploadFolder(name: string, target: ThreadTarget): boolean {
  const folder = conversationUploadFolder(target);
  if (name === folder) return true;
  const ids = [target.platform, target.workspace, target.channel];
  return ids.every((id) => PLAIN_ID.test(id)) && name.startsWith(`${folder}_`);
}
