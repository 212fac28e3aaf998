/**
 * One file into a Slack conversation, by files.uploadV2 (files.getUploadURLExternal, the upload
 * to the URL it gives, files.completeUploadExternal): its bytes under a name that is also its
 * title, into the target's thread when it has one, then its caption as a message of its own —
 * not as the upload's `initial_comment`, which has no unfurl control (see slack-unfurls.ts). What
 * send_file sends and the whole text of a cut card both go up this way.
 */
import type { ThreadTarget } from "../../core/thread-target.js";
import { callWithRetry, type WebClient } from "./slack-api.js";
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

/**
 * Upload `file` into `target`'s conversation (its thread, when it has one) and post its comment
 * after it; throws what Slack refuses.
 */
export async function uploadFile(
  api: WebClient,
  target: Pick<ThreadTarget, "channel" | "thread">,
  file: SlackUpload,
): Promise<void> {
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
  if (!comment) return;
  await callWithRetry(() =>
    api.chat.postMessage({
      channel: target.channel,
      ...(target.thread ? { thread_ts: target.thread } : {}),
      text: comment,
      ...NO_UNFURLS,
    }),
  );
}
