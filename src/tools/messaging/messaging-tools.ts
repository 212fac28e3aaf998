/**
 * send_message {channel, text} and send_file {path, caption?}: post to another channel or chat the
 * bot is in, or upload a workspace file into the current thread, through a Messenger. A message is
 * sent for the turn's requester: the Messenger posts elsewhere than this conversation only where
 * that person is a member. Posting to the current thread needs no approval: send_message declares
 * `staysInConversation`.
 */
import path from "node:path";
import { z } from "zod";
import type { ConversationExecutionRequest } from "../../core/request.js";
import { NotRegularFileError } from "../files/anchored-fs.js";
import type { ConversationWorkspace } from "../files/conversation-workspace.js";
import { fileErrorMessage } from "../files/fs-errors.js";
import { withWorkspaceFile } from "../files/service-file-access.js";
import { requestCaller, threadTargetOf } from "../session-target.js";
import { defineTool, fail, ok, type ToolResult } from "../../core/tool.js";
import type { Messenger, MessengerResult } from "./messenger.js";

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

const sendMessageSchema = z.object({
  channel: z
    .string()
    .trim()
    .min(1)
    .describe(
      `Channel or chat id/name to post to; "${CURRENT_CHANNEL}" (or this conversation's channel id) means this thread`,
    ),
  text: z.string().trim().min(1).describe("The message text"),
});
const sendFileSchema = z.object({
  path: z.string().min(1).describe("Workspace file to upload into this conversation"),
  caption: z.string().optional().describe("Optional caption shown with the file"),
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

/** Build send_message and send_file. */
export function createMessagingTools(options: MessagingToolsOptions) {
  const maxFileBytes = options.maxFileBytes ?? 50 * 1024 * 1024;

  const sendMessage = defineTool({
    name: "send_message",
    description:
      "Post a message to another channel or chat the bot and the person asking are both in (needs approval), " +
      `or to this conversation with channel "${CURRENT_CHANNEL}".`,
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
      const here = isCurrentThreadTarget(args, context.request);
      return {
        summary: here ? "Post a message in this conversation" : `Post a message to ${args.channel}`,
        detail: { kind: "text", text: args.text },
      };
    },
  });

  const sendFile = defineTool({
    name: "send_file",
    description: "Upload a file from the workspace into this conversation, with an optional caption.",
    inputSchema: sendFileSchema,
    category: "messaging",
    risk: "low",
    concurrent: false,
    label: (args) => args.path,
    async execute(args, context) {
      const target = threadTargetOf(context.request);
      if (!target) return fail(NO_TARGET);
      const paths = options.workspace.forRequest(context.request);
      try {
        // Read from the file held open (service-file-access.ts): a command of another session in
        // the same workspace could swap the path for a link to a host file before the upload.
        return await withWorkspaceFile(paths, args.path, async (opened, info, file) =>
          info.size > maxFileBytes
            ? fail(`${file.display} is ${info.size} bytes, over the ${maxFileBytes}-byte upload limit`)
            : answer(
                await options.messenger.sendFile(
                  target,
                  { path: opened, name: path.basename(file.absolute) },
                  args.caption,
                ),
                `Uploaded ${file.display} to`,
              ),
        );
      } catch (error) {
        if (error instanceof NotRegularFileError) return fail(`${args.path} is not a file`);
        return fail(fileErrorMessage(error, args.path));
      }
    },
    async preview(args) {
      return {
        summary: `Upload ${args.path} into this conversation${args.caption ? ` — "${args.caption}"` : ""}`,
      };
    },
  });

  return [sendMessage, sendFile] as const;
}
