/**
 * send_message {channel, text} and send_file {path, caption?}: post to another channel or chat the
 * bot is in, or upload a workspace file into the current thread, through a Messenger. A message is
 * sent for the turn's requester: the Messenger posts elsewhere than this conversation only where
 * that person is a member. Posting to the current thread needs no approval: send_message declares
 * `staysInConversation`. Its card names the channel the platform resolves the argument to
 * (Messenger.destinationOf), as one line of literal text, and shows the message as code: literal
 * text, and, where it is longer than a card holds (a Telegram card shows 1,500 characters of a text
 * block and drops the rest), posted whole beside the card as a file (card-attachment.ts), so the
 * person deciding can read all of what would go out.
 * A message is at most MAX_MESSAGE_CHARS characters, about two chat messages: the Messenger splits
 * a longer text into as many posts as it takes, so a model steered by what it read could otherwise
 * flood a channel with hundreds of them. A send_file caption is at most MAX_CAPTION_CHARS, Telegram's
 * limit: past it the channel would cut it without a word, and the model would think it all went out.
 *
 * send_file binds its preview (ToolDefinition.bindsPreview): the card names the file it will really
 * upload — its workspace path after links are resolved, the name people will see, its size — and
 * carries a fingerprint of that path, name and the file's bytes (read through the same confined,
 * held-open read the upload uses). An approved upload runs only while that is unchanged: the engine
 * checks it just before the run, and the run checks the bytes it is about to upload once more. The
 * path (as the model wrote it and resolved), the file's name — the model names workspace files —
 * and the caption are the model's words, shown as literal text, the caption below the card's line
 * rather than on it, as code (like send_message's text), so a card that cuts it posts it whole.
 */
import path from "node:path";
import { z } from "zod";
import { formatBytes } from "../../core/attachment.js";
import { literalLine } from "../../core/one-line.js";
import { fileSha256 } from "../../core/file-sha256.js";
import type { ConversationExecutionRequest } from "../../core/request.js";
import { NotRegularFileError } from "../files/anchored-fs.js";
import { contentFingerprint } from "../files/content-fingerprint.js";
import type { ConversationWorkspace } from "../files/conversation-workspace.js";
import { fileErrorMessage } from "../files/fs-errors.js";
import { pathOnCard, reasonOnCard } from "../files/path-on-card.js";
import { withWorkspaceFile } from "../files/service-file-access.js";
import { requestCaller, threadTargetOf } from "../session-target.js";
import { defineTool, fail, ok, type ToolPreview, type ToolResult } from "../../core/tool.js";
import type { Messenger, MessengerResult } from "./messenger.js";
import { groupedCount } from "../../core/count-text.js";

/** The channel value that means "this conversation". */
export const CURRENT_CHANNEL = "current";

/** Dependencies of the messaging tools. */
export interface MessagingToolsOptions {
  readonly messenger: Messenger;
  /** For send_file: the files that may be uploaded, in each caller's view (conversation-workspace.ts). */
  readonly workspace: ConversationWorkspace;
  /** Largest upload (default 50 MB). */
  readonly maxFileBytes?: number;
}

/** Longest message send_message posts, in characters: about two Telegram messages or Slack posts. */
const MAX_MESSAGE_CHARS = 8_000;

/**
 * Longest send_file caption, in characters: Telegram's own limit for a document's caption, which
 * the channel would otherwise cut silently (Slack posts it as a message of its own).
 */
const MAX_CAPTION_CHARS = 1_024;

const sendMessageSchema = z.object({
  channel: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .describe(
      `Channel or chat id/name to post to; "${CURRENT_CHANNEL}" (or this conversation's channel id) means this thread`,
    ),
  text: z
    .string()
    .trim()
    .min(1)
    .max(
      MAX_MESSAGE_CHARS,
      `A message is at most ${groupedCount(MAX_MESSAGE_CHARS)} characters: shorten it (for this conversation, a longer text can go in a workspace file uploaded with send_file)`,
    )
    .describe(`The message text (at most ${groupedCount(MAX_MESSAGE_CHARS)} characters)`),
});
const sendFileSchema = z.object({
  path: z.string().min(1).describe("Workspace file to upload into this conversation"),
  caption: z
    .string()
    .max(
      MAX_CAPTION_CHARS,
      `A caption is at most ${groupedCount(MAX_CAPTION_CHARS)} characters: shorten it, or send the longer text with send_message`,
    )
    .optional()
    .describe(`Optional caption shown with the file (at most ${groupedCount(MAX_CAPTION_CHARS)} characters)`),
});

/**
 * Whether a send_message call targets the conversation it was made from: channel "current", or
 * the session's own channel id (which the Messenger delivers into the session's thread).
 */
export function isCurrentThreadTarget(
  args: Readonly<Record<string, unknown>>,
  request: ConversationExecutionRequest,
): boolean {
  const target = threadTargetOf(request);
  if (!target || typeof args.channel !== "string") return false;
  const channel = args.channel.trim();
  return channel === CURRENT_CHANNEL || channel === target.channel;
}

function answer(result: MessengerResult, success: string): ToolResult {
  return result.ok ? ok(`${success} ${result.where}.`) : fail(result.error);
}

const NO_TARGET = "This conversation has no known thread to post from, so nothing was sent.";

/** send_file's answer when the file it would upload is no longer the one its approved card showed. */
export const UPLOAD_CHANGED_SINCE_APPROVAL =
  "Not run: the file this call would upload changed after the user approved it (another file, or other content, is at that path now). Nothing was uploaded. Propose it again if it is still wanted, so they see the current version.";

/** What one send_file call would upload, as read now: the card's words and their fingerprint. */
interface PlannedUpload {
  /** Resolved workspace path (links resolved), as shown. */
  readonly shown: string;
  /** The name people see. */
  readonly name: string;
  readonly size: number;
  /** Why the upload would be refused (too large), else undefined. */
  readonly refusal?: string;
  readonly fingerprint: string;
}

/** The upload planned from the open file (`opened`, as `info` and `file` describe it). */
async function planUpload(
  opened: string,
  info: { readonly size: number },
  file: { readonly absolute: string; readonly display: string },
  maxBytes: number,
): Promise<PlannedUpload> {
  const name = path.basename(file.absolute);
  const hash = info.size > maxBytes ? undefined : await fileSha256(opened, maxBytes);
  if (hash === undefined) {
    const refusal = `${file.display} is ${info.size} bytes, over the ${maxBytes}-byte upload limit`;
    return {
      shown: file.display,
      name,
      size: info.size,
      refusal,
      fingerprint: contentFingerprint(["send_file", file.display, name, "too large", info.size]),
    };
  }
  return {
    shown: file.display,
    name,
    size: info.size,
    fingerprint: contentFingerprint(["send_file", file.display, name, info.size, hash]),
  };
}

/** Longest channel shown on send_message's card, in characters. */
const CHANNEL_SHOWN_MAX = 120;

/**
 * The channel a send_message card names, as one line of literal text (the argument is the model's:
 * Slack's `<#C…|label>` form alone carries any label, line breaks included): the channel the
 * platform resolves it to; else the argument, clipped, and that the post will be refused.
 */
async function destinationShown(
  messenger: Messenger,
  channel: string,
  request: ConversationExecutionRequest,
): Promise<string> {
  const sender = requestCaller(request);
  const where = sender && (await messenger.destinationOf(sender, channel));
  if (where) return literalLine(where, CHANNEL_SHOWN_MAX);
  const asked = literalLine(channel, CHANNEL_SHOWN_MAX);
  return `${asked} (will be refused: I could not confirm it is a channel the person asking may post in)`;
}

/** Build send_message and send_file. */
export function createMessagingTools(options: MessagingToolsOptions) {
  const maxFileBytes = options.maxFileBytes ?? 50 * 1024 * 1024;

  const sendMessage = defineTool({
    name: "send_message",
    description:
      "Post a message to another channel or chat the bot and the person asking are both in (needs approval), " +
      `or to this conversation with channel "${CURRENT_CHANNEL}". At most ${groupedCount(MAX_MESSAGE_CHARS)} ` +
      "characters (here, a longer text can go in a file uploaded with send_file).",
    inputSchema: sendMessageSchema,
    category: "messaging",
    risk: "medium",
    concurrent: false,
    label: (args) => `to ${args.channel === CURRENT_CHANNEL ? "this conversation" : args.channel}`,
    async execute(args, context) {
      const sender = requestCaller(context.request);
      if (!sender) return fail(NO_TARGET);
      const channel = args.channel === CURRENT_CHANNEL ? sender.target.channel : args.channel;
      return answer(await options.messenger.sendMessage(sender, channel, args.text), "Sent to");
    },
    staysInConversation: (args, request) => isCurrentThreadTarget(args, request),
    async preview(args, context) {
      // Literal: rendered, a link's words could name another place than it leads to. As code, all
      // of it can be read: a longer one than the card holds is posted whole beside it.
      const detail = { kind: "code", text: args.text } as const;
      if (isCurrentThreadTarget(args, context.request))
        return { summary: "Post a message in this conversation", detail };
      return {
        summary: `Post a message to ${await destinationShown(options.messenger, args.channel, context.request)}`,
        detail,
      };
    },
  });

  const sendFile = defineTool({
    name: "send_file",
    description:
      "Upload a file from the workspace into this conversation, with an optional caption " +
      `(at most ${groupedCount(MAX_CAPTION_CHARS)} characters).`,
    inputSchema: sendFileSchema,
    category: "messaging",
    risk: "low",
    concurrent: false,
    // The card names the file as it was: another file, or other bytes, must not go out unseen.
    bindsPreview: true,
    label: (args) => args.path,
    async execute(args, context) {
      const target = threadTargetOf(context.request);
      if (!target) return fail(NO_TARGET);
      const paths = options.workspace.forRequest(context.request);
      try {
        // Read from the file held open (service-file-access.ts): a command of another session in
        // the same workspace could swap the path for a link to a host file before the upload.
        return await withWorkspaceFile(paths, args.path, async (opened, info, file) => {
          if (info.size > maxFileBytes)
            return fail(`${file.display} is ${info.size} bytes, over the ${maxFileBytes}-byte upload limit`);
          // An approved call: the engine found its file as the card showed it just before the run;
          // these bytes, from the file held open for the upload, must still be those.
          const approved = context.checkedPreview?.fingerprint;
          if (approved !== undefined) {
            const plan = await planUpload(opened, info, file, maxFileBytes);
            if (plan.fingerprint !== approved) return fail(UPLOAD_CHANGED_SINCE_APPROVAL);
          }
          return answer(
            await options.messenger.sendFile(
              target,
              { path: opened, name: path.basename(file.absolute) },
              args.caption,
            ),
            `Uploaded ${file.display} to`,
          );
        });
      } catch (error) {
        if (error instanceof NotRegularFileError) return fail(`${args.path} is not a file`);
        return fail(fileErrorMessage(error, args.path));
      }
    },
    async preview(args, context): Promise<ToolPreview> {
      // The caption is the model's text: on the card's own line it could write lines of the card.
      // As code, all of it can be read: a longer one than the card holds is posted whole beside it.
      const caption = args.caption ? ", with the caption below" : "";
      const detail = args.caption ? { detail: { kind: "code", text: args.caption } as const } : {};
      try {
        const paths = options.workspace.forRequest(context.request);
        const plan = await withWorkspaceFile(paths, args.path, (opened, info, file) =>
          planUpload(opened, info, file, maxFileBytes),
        );
        const linked = plan.shown === args.path ? "" : ` (${pathOnCard(args.path)} leads there)`;
        const what = `${pathOnCard(plan.shown)}${linked} as "${pathOnCard(plan.name)}" (${formatBytes(plan.size)})`;
        return {
          summary:
            plan.refusal === undefined
              ? `Upload ${what} into this conversation${caption}`
              : `Upload ${what} — will fail: ${reasonOnCard(plan.refusal)}`,
          ...detail,
          fingerprint: plan.fingerprint,
        };
      } catch (error) {
        const failure =
          error instanceof NotRegularFileError
            ? `${args.path} is not a file`
            : fileErrorMessage(error, args.path);
        return {
          summary: `Upload ${pathOnCard(args.path)} — will fail: ${reasonOnCard(failure)}`,
          fingerprint: contentFingerprint(["send_file", args.path, "fails", failure]),
        };
      }
    },
  });

  return [sendMessage, sendFile] as const;
}
