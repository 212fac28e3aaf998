/**
 * Files attached to Slack messages: downloaded with the bot token (Slack answers unauthenticated
 * requests with its login page), capped in size while streaming, checked to really be the file
 * (an HTML body for a non-HTML file is the login page, not the file), and saved into the
 * workspace in the session's upload folder (core/upload-folders.ts), each within the download
 * deadline shared with the other channels (shared/body-within.ts). Redirects are followed by hand,
 * and only to another Slack-hosted URL (isSlackHosted, a few hops at most): Slack may move a file
 * between its own hosts, but a redirect elsewhere would carry the download (and what the agent
 * reads as the person's file) to a host nobody vetted, so it is not followed. Before a file is
 * fetched, the upload gate (attachments/upload-gate.ts) must let it through: the sender's bytes of
 * the day and the free disk space. Whatever could not be fetched, or was not let through, becomes
 * a note the model sees (and the person is told), never a silent loss.
 */
import { posix } from "node:path";
import type { Logger } from "pino";
import type { UploadGate, UploadHold } from "../../attachments/upload-gate.js";
import { HIDDEN_CHARACTERS } from "../../core/hidden-characters.js";
import { REDIRECT_STATUSES } from "../../core/http-redirects.js";
import type { InboundFile } from "../../core/inbound-message.js";
import { clipLine, foldedLine } from "../../core/one-line.js";
import { conversationPaths } from "../../tools/files/conversation-paths.js";
import { uploadFolderOf } from "../../core/upload-folders.js";
import type { ThreadTarget } from "../../core/thread-target.js";
import { refusalReason, saveInWorkspace } from "../../tools/files/service-file-access.js";
import type { WorkspacePaths } from "../../tools/files/workspace-paths.js";
import { type DownloadDeadline, downloadDeadline, megabytes, readBodyWithin } from "../shared/body-within.js";
import type { SlackFile } from "./slack-events.js";

export interface FileDownloadOptions {
  readonly botToken: string;
  /** The Web API base URL: files on its host (and on Slack's own hosts) may get the bot token. */
  readonly apiUrl: string;
  readonly maxBytes: number;
  /**
   * The agent's workspace: files are saved there without following a link (service-file-access.ts)
   * nor into another conversation's uploads (conversation-paths.ts).
   */
  readonly workspace: WorkspacePaths;
  readonly logger: Logger;
  /** How long a file's download may take, in ms (default: shared/body-within.ts's, as Telegram's). */
  readonly timeoutMs?: number;
  /**
   * Asked before each download: the sender's daily bytes and the free disk space
   * (attachments/upload-gate.ts).
   */
  readonly uploads: UploadGate;
}

export interface DownloadResult {
  readonly files: readonly InboundFile[];
  /** One line per file that could not be saved, for the prompt. */
  readonly notes: readonly string[];
}

class FileRefused extends Error {}

/** Most redirects followed for one file, each to a Slack-hosted URL. */
const MAX_REDIRECTS = 3;

/** A file name safe on every filesystem, keeping the extension. */
export function safeFileName(name: string): string {
  const cleaned = name
    .normalize("NFKC")
    .replace(/[^\w.\- ]+/g, "_")
    .replace(/\s+/g, "_")
    .replace(/^\.+/, "")
    .slice(-120);
  return cleaned.length > 0 ? cleaned : "file";
}

/** The longest file name a note or the model is given (Slack's own limit is 255). */
const MAX_SHOWN_NAME = 120;

/** An extension a cut name keeps (`.pdf`, `.tar.gz`'s `.gz`): a dot and a few letters or digits. */
const KEPT_EXTENSION = /\.[A-Za-z0-9]{1,10}$/;

/**
 * The name people know a file by, as the thread's notes and the model are given it: on one line,
 * without the characters that hide or reorder text, at most MAX_SHOWN_NAME characters. The sender
 * picks it, so raw it could start a line of its own in the bot's note ("…not saved.\nCoworker:
 * approved") or read in another order than it is stored. A longer name is cut before its
 * extension, which stays: the saved file is named after it, and its kind (a PDF, a text file,
 * a recording) is told by the extension where Slack's media type does not.
 */
export function shownFileName(name: string): string {
  const line = foldedLine(name.replace(HIDDEN_CHARACTERS, ""));
  if (line.length <= MAX_SHOWN_NAME) return line || "file";
  const extension = KEPT_EXTENSION.exec(line)?.[0] ?? "";
  return (
    clipLine(line.slice(0, line.length - extension.length), MAX_SHOWN_NAME - extension.length) + extension
  );
}

/**
 * Whether the bot token may go with a request for `url`: Slack's own hosts over HTTPS, or the
 * configured Web API's. A file's URL is not always Slack's — remote files (files.remote.add, by any
 * app, to any URL) and Drive or Dropbox links carry the other service's URL in `url_private`.
 */
export function isSlackHosted(url: string, apiUrl: string): boolean {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return false;
  }
  const api = new URL(apiUrl);
  const within = (domain: string) => target.hostname === domain || target.hostname.endsWith(`.${domain}`);
  if (target.origin === api.origin) return true;
  return target.protocol === "https:" && (within("slack.com") || within(api.hostname));
}

function looksLikeHtml(head: Buffer): boolean {
  const start = head.subarray(0, 256).toString("utf8").trimStart().toLowerCase();
  return start.startsWith("<!doctype html") || start.startsWith("<html");
}

async function readCapped(response: Response, maxBytes: number): Promise<Buffer> {
  const declared = Number(response.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > maxBytes) {
    throw new FileRefused(`it is ${megabytes(declared)}, over the ${megabytes(maxBytes)} limit`);
  }
  return readBodyWithin(
    response.body,
    maxBytes,
    () => new FileRefused(`it is over the ${megabytes(maxBytes)} limit`),
  );
}

/**
 * GET `url` with the bot token, following redirects only to Slack-hosted URLs (at most
 * MAX_REDIRECTS): a redirect off Slack is refused before anything is sent there.
 */
async function fetchFollowingSlack(
  url: string,
  options: FileDownloadOptions,
  deadline: DownloadDeadline,
): Promise<Response> {
  let current = url;
  for (let hop = 0; ; hop += 1) {
    const response = await fetch(current, {
      headers: { authorization: `Bearer ${options.botToken}` },
      redirect: "manual",
      signal: deadline.signal,
    });
    if (!REDIRECT_STATUSES.has(response.status)) return response;
    await response.body?.cancel();
    const location = response.headers.get("location");
    if (!location) throw new FileRefused(`Slack answered HTTP ${response.status} without saying where to`);
    let next: URL;
    try {
      next = new URL(location, current);
    } catch {
      throw new FileRefused("its download redirected to an invalid address");
    }
    if (!isSlackHosted(next.href, options.apiUrl)) {
      throw new FileRefused(`its download redirected to ${next.host}, outside Slack, and was not followed`);
    }
    if (hop >= MAX_REDIRECTS)
      throw new FileRefused(`its download redirected more than ${MAX_REDIRECTS} times`);
    current = next.href;
  }
}

/** The URL to download `file` from, once what Slack says of it allows a download at all. */
function downloadUrlOf(file: SlackFile, options: FileDownloadOptions): string {
  const url = file.url_private_download ?? file.url_private;
  if (!url || file.mode === "tombstone" || file.mode === "hidden_by_limit") {
    throw new FileRefused("Slack no longer makes it available");
  }
  if (!isSlackHosted(url, options.apiUrl)) throw new FileRefused("it is stored outside Slack");
  if (file.size !== undefined && file.size > options.maxBytes) {
    throw new FileRefused(`it is ${megabytes(file.size)}, over the ${megabytes(options.maxBytes)} limit`);
  }
  return url;
}

async function fetchFile(
  file: SlackFile,
  url: string,
  options: FileDownloadOptions,
  deadline: DownloadDeadline,
): Promise<Buffer> {
  const response = await fetchFollowingSlack(url, options, deadline);
  if (!response.ok) throw new FileRefused(`Slack answered HTTP ${response.status}`);
  const expectsHtml = (file.mimetype ?? "").includes("html");
  const contentType = response.headers.get("content-type") ?? "";
  if (!expectsHtml && contentType.includes("text/html")) {
    await response.body?.cancel();
    throw new FileRefused("Slack sent its sign-in page instead of the file (does the app have files:read?)");
  }
  const body = await readCapped(response, options.maxBytes);
  if (!expectsHtml && looksLikeHtml(body)) {
    throw new FileRefused("Slack sent a web page instead of the file (does the app have files:read?)");
  }
  return body;
}

/** Why a file was refused or given up on, in words for the note; undefined for a failure worth a log line. */
function refusalOf(error: unknown, deadline: DownloadDeadline): string | undefined {
  return error instanceof FileRefused ? error.message : (deadline.overdue(error) ?? refusalReason(error));
}

/**
 * Download the files `author` sent in `target`'s conversation into its upload folder, through that
 * conversation's view of the workspace: a link left in its folder into another conversation's
 * uploads is refused, as the file tools refuse it.
 */
export async function downloadFiles(
  files: readonly SlackFile[],
  target: ThreadTarget,
  author: string,
  options: FileDownloadOptions,
): Promise<DownloadResult> {
  const saved: InboundFile[] = [];
  const notes: string[] = [];
  const relativeDir = uploadFolderOf(target);
  const workspace = conversationPaths(options.workspace, target);
  const { uploads } = options;
  for (const file of files) {
    const name = shownFileName(file.name ?? file.title ?? file.id);
    const deadline = downloadDeadline(options.timeoutMs);
    let hold: UploadHold | undefined;
    try {
      const url = downloadUrlOf(file, options);
      // The sender's daily bytes and the free disk space, before anything is fetched.
      const admission = await uploads.admit(target.platform, author, file.size, options.maxBytes);
      if (!admission.ok) throw new FileRefused(admission.reason);
      hold = admission;
      const body = await fetchFile(file, url, options, deadline);
      const fileName = `${safeFileName(file.id)}-${safeFileName(name)}`;
      await saveInWorkspace(workspace, posix.join(relativeDir, fileName), body);
      await hold.settle(body.length);
      hold = undefined;
      saved.push({
        path: posix.join(relativeDir, fileName),
        name,
        bytes: body.length,
        ...(file.mimetype ? { mediaType: file.mimetype } : {}),
        // An audio clip the sender recorded in Slack is their voice: its transcript is their words
        // (one someone else recorded, shared on, is file content like any other).
        ...(file.subtype === "slack_audio" && file.user === author ? { ownVoice: true } : {}),
        // Its length when Slack gives it, so the transcription length cap applies as on Telegram.
        ...(file.duration_ms !== undefined ? { durationS: file.duration_ms / 1000 } : {}),
      });
    } catch (error) {
      await hold?.release();
      const refusal = refusalOf(error, deadline);
      if (refusal === undefined)
        options.logger.warn({ err: error, file: file.id }, "slack file download failed");
      notes.push(`The attached file "${name}" was not saved: ${refusal ?? "it could not be downloaded"}.`);
    }
  }
  return { files: saved, notes };
}
