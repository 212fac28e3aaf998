/**
 * One file into a Slack conversation, by files.uploadV2 (files.getUploadURLExternal, the upload
 * to the URL it gives, files.completeUploadExternal): its bytes under a name that is also its
 * title, into the target's thread when it has one, then its caption as a message of its own —
 * not as the upload's `initial_comment`, which has no unfurl control (see slack-unfurls.ts). What
 * send_file sends and the whole text of a cut card both go up this way. Once the file is up, the
 * upload has happened: a caption Slack then refuses is logged and reported, never thrown (the
 * caller would report the file as not sent, and a retry would post it twice).
 */
import type { Logger } from "pino";
import type { ThreadTarget } from "../../core/thread-target.js";
import { callWithRetry, describeError, slackErrorCode, type WebClient } from "./slack-api.js";
import { NO_UNFURLS } from "./slack-unfurls.js";

/** A file to upload. */
export interface SlackUpload {
  readonly data: Buffer;
  /** The name people see, and the file's title. */
  readonly name: string;
  /** mrkdwn posted right after the file, ready to post (converted and cut by the caller). */
  readonly comment?: string;
  /** Slack's snippet type: "text" shows the file as plain text, whatever it holds. */
  readonly snippetType?: string;
}

/** A file that is up; `captionError` says why its comment is not (Slack's code, else the error). */
export interface UploadOutcome {
  readonly captionError?: string;
}

/**
 * Upload `file` into `target`'s conversation (its thread, when it has one) and post its comment
 * after it; throws what Slack refuses of the upload, and reports (after a warning) what it
 * refuses of the comment.
 */
export async function uploadFile(
  api: WebClient,
  target: Pick<ThreadTarget, "channel" | "thread">,
  file: SlackUpload,
  logger: Logger,
): Promise<UploadOutcome> {
  const common = {
    file: file.data,
    filename: file.name,
    title: file.name,
    ...(file.snippetType ? { snippet_type: file.snippetType } : {}),
  };
  await api.filesUploadV2(
    target.thread
      ? { ...common, channel_id: target.channel, thread_ts: target.thread }
      : { ...common, channel_id: target.channel },
  );
  const comment = file.comment;
  if (!comment) return {};
  try {
    await callWithRetry(() =>
      api.chat.postMessage({
        channel: target.channel,
        ...(target.thread ? { thread_ts: target.thread } : {}),
        text: comment,
        ...NO_UNFURLS,
      }),
    );
    return {};
  } catch (error) {
    logger.warn(
      { err: describeError(error), channel: target.channel, file: file.name },
      "slack took the file but refused its caption",
    );
    return { captionError: slackErrorCode(error) ?? describeError(error) };
  }
}
