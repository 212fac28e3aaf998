/**
 * NativeStream: one turn's answer streamed with Slack's native streaming (chat.startStream /
 * appendStream / stopStream through the web-api's `chatStream` helper). Text is appended as
 * markdown; tool calls and plan steps become task cards that update in place. Any refusal ends
 * native streaming for the turn: the caller latches to its post-and-update fallback, keeping
 * the stream's message. A stream also ends when it holds `budgetChars` of text (Slack caps one
 * call at 12,000) so the rest can continue as ordinary pages.
 */
import type { types } from "@slack/bolt";
import { describeError, slackErrorCode, type WebClient } from "./slack-api.js";
import { isTransientFailure } from "./slack-capabilities.js";

type ChatStreamer = ReturnType<WebClient["chatStream"]>;

export type StreamResult =
  /** Accepted (or buffered). */
  | "ok"
  /** Slack refused or failed; see `failure`. */
  | "failed"
  /** The person stopped the stream in Slack. */
  | "stopped_by_user"
  /** The text budget is used up; nothing was appended. */
  | "full";

export interface NativeStreamOptions {
  readonly client: WebClient;
  readonly channel: string;
  readonly threadTs: string;
  /** Required outside DMs. */
  readonly recipient?: { readonly userId: string; readonly teamId: string };
  /** Characters the helper buffers before it calls Slack (default 256). */
  readonly bufferSize?: number;
  readonly budgetChars: number;
}

export class NativeStream {
  private readonly streamer: ChatStreamer;
  private chars = 0;
  private unflushed = 0;
  private done = false;
  /** Slack's error code (or message) of the failure that ended the stream. */
  failure: string | undefined;
  /** Whether that failure was transient (rate limit, server trouble) rather than a refusal. */
  failureTransient = false;

  constructor(private readonly options: NativeStreamOptions) {
    this.streamer = options.client.chatStream({
      channel: options.channel,
      thread_ts: options.threadTs,
      ...(options.recipient
        ? { recipient_user_id: options.recipient.userId, recipient_team_id: options.recipient.teamId }
        : {}),
      task_display_mode: "timeline",
      buffer_size: options.bufferSize ?? 256,
    });
  }

  /** The stream message's ts once Slack created it. */
  get ts(): string | undefined {
    return this.streamer.ts;
  }

  /** Whether Slack has created the message yet. */
  get started(): boolean {
    return this.streamer.ts !== undefined;
  }

  /** Append answer text (buffered by the helper). */
  async appendText(text: string): Promise<StreamResult> {
    if (this.done) return "failed";
    if (this.chars + text.length > this.options.budgetChars) return "full";
    this.chars += text.length;
    this.unflushed += text.length;
    return this.run(async () => {
      const response = await this.streamer.append({ markdown_text: text });
      if (response !== null) this.unflushed = 0;
    });
  }

  /** Send buffered text now (used when the buffer has waited long enough). */
  async flush(): Promise<StreamResult> {
    if (this.done || this.unflushed === 0) return this.done ? "failed" : "ok";
    return this.run(async () => {
      await this.streamer.append({ chunks: [] });
      this.unflushed = 0;
    });
  }

  /** Show or update task cards (tool calls, plan steps); flushes buffered text first. */
  async tasks(chunks: readonly types.TaskUpdateChunk[]): Promise<StreamResult> {
    if (this.done) return "failed";
    if (chunks.length === 0) return "ok";
    return this.run(async () => {
      await this.streamer.append({ chunks: [...chunks] });
      this.unflushed = 0;
    });
  }

  /** Finish the stream, with optional blocks under it. */
  async stop(blocks?: readonly types.KnownBlock[]): Promise<StreamResult> {
    if (this.done) return "failed";
    const result = await this.run(async () => {
      await this.streamer.stop(blocks && blocks.length > 0 ? { blocks: [...blocks] } : undefined);
    });
    this.done = true;
    return result;
  }

  private async run(call: () => Promise<void>): Promise<StreamResult> {
    try {
      await call();
      return "ok";
    } catch (error) {
      this.done = true;
      this.failure = describeError(error);
      this.failureTransient = isTransientFailure(error);
      return slackErrorCode(error) === "stopped_by_user" ? "stopped_by_user" : "failed";
    }
  }
}
