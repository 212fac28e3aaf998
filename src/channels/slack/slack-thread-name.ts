/**
 * How a /coworker command's answer names the thread it acted on (the person's latest thread in the
 * channel, which the command never showed): when that thread started, in the reader's own time zone
 * (Slack's date token), and a link to it where chat.getPermalink gives one — so a person sees at
 * once when a command such as `mode auto` went to another thread than the one they meant. Without
 * the link (the call failed, or gave no https address) the start time alone names it.
 */
import type { Logger } from "pino";
import { z } from "zod";
import { describeError, type WebClient } from "./slack-api.js";

/** An https address that cannot break out of a mrkdwn link (`<url|text>`). */
const permalinkSchema = z
  .string()
  .max(2_000)
  .regex(/^https:\/\/[^\s<>|]+$/);

/** `YYYY-MM-DD HH:MM UTC`: a Slack ts's time for clients that do not render date tokens. */
function utcText(seconds: number): string {
  return `${new Date(seconds * 1000).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/** The line (Slack mrkdwn) naming the thread `threadTs` of `channel`, placed before a command's answer. */
export async function threadNameLine(
  api: WebClient,
  channel: string,
  threadTs: string,
  logger: Logger,
): Promise<string> {
  const seconds = Math.floor(Number(threadTs));
  const started = Number.isFinite(seconds)
    ? `, started <!date^${seconds}^{date_short_pretty} at {time}|${utcText(seconds)}>`
    : "";
  let link = "";
  try {
    const answer = await api.chat.getPermalink({ channel, message_ts: threadTs });
    const permalink = permalinkSchema.safeParse(answer.permalink);
    if (permalink.success) link = ` (<${permalink.data}|open it>)`;
  } catch (error) {
    logger.debug({ err: describeError(error) }, "slack gave no permalink for a command's thread");
  }
  return `_In your latest thread here${started}${link}:_`;
}
