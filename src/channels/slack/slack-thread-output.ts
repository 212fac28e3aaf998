/**
 * SlackThreadOutput: the session layer's handle on one Slack thread. It starts a renderer per
 * turn, posts and updates approval / question cards (falling back to a plain-text card with the
 * typed-reply equivalents when Slack refuses the blocks) and posts short messages. Every post
 * waits out rate limits, and marks the thread as one the bot takes part in.
 */
import type { Logger } from "pino";
import type { Card, CardRef } from "../../core/card.js";
import type { ThreadOutput, TurnRenderer } from "../../core/thread-output.js";
import type { ThreadTarget } from "../../core/thread-target.js";
import { callWithRetry, type SlackClients } from "./slack-api.js";
import type { CapabilityLatch, ConversationKind } from "./slack-capabilities.js";
import { cardPlainText, renderCard } from "./slack-cards.js";
import { escapeMrkdwn, SLACK_LIMITS } from "./slack-limits.js";
import { markdownToMrkdwn } from "./slack-markdown.js";
import { isPayloadError } from "./slack-pages.js";
import { SlackTurnRenderer } from "./slack-renderer.js";
import { splitMrkdwn } from "./slack-split.js";
import type { ThreadRegistry } from "./slack-threads.js";

/** How turns are rendered (tunable for tests and benchmarks). */
export interface RenderSettings {
  /**
   * Minimum time between live edits of one turn's page messages (default 1,250 ms: chat.update
   * is Tier 3, ~50 a minute).
   */
  readonly editIntervalMs: number;
  /**
   * Minimum time between appends to one turn's native stream (default 650 ms: chat.appendStream
   * is Tier 4, ~100 a minute, and a long answer should use most of it).
   */
  readonly streamIntervalMs: number;
  /**
   * How long a turn's first content waits before it is shown (default 250 ms): an answer that
   * is complete by then goes out as one message, without a stream (start/stopStream are Tier 2).
   */
  readonly firstFlushMs: number;
  /** How long a turn runs before the thinking status is shown (default 500 ms; quick turns need none). */
  readonly statusDelayMs: number;
  /** How often the thinking status is re-sent (Slack drops it after 2 min; default 90 s). */
  readonly statusRefreshMs: number;
  /** Try Slack's native streaming first (default true). */
  readonly nativeStreaming: boolean;
  /** Text one native stream may hold before the rest continues as pages (default 10,000). */
  readonly streamBudgetChars: number;
}

export const DEFAULT_RENDER_SETTINGS: RenderSettings = Object.freeze({
  editIntervalMs: 1_250,
  streamIntervalMs: 650,
  firstFlushMs: 250,
  statusDelayMs: 500,
  statusRefreshMs: 90_000,
  nativeStreaming: true,
  streamBudgetChars: 10_000,
});

export interface ThreadOutputDeps {
  readonly clients: SlackClients;
  readonly capabilities: CapabilityLatch;
  readonly threads: ThreadRegistry;
  readonly logger: Logger;
  readonly settings: RenderSettings;
  /** Interrupt the target's running turn on behalf of `userId` (the native stream was stopped). */
  readonly stopTurn: (target: ThreadTarget, userId: string) => void;
}

/** Plain-text messages stay under chat.update's limit, so they can be edited later. */
const TEXT_LIMIT = SLACK_LIMITS.updateText - 100;

/** DMs have channel ids starting with "D"; the inbound side also records the kind in `extra`. */
export function kindOf(target: ThreadTarget): ConversationKind {
  const kind = target.extra?.kind;
  if (kind === "dm" || kind === "channel") return kind;
  return target.channel.startsWith("D") ? "dm" : "channel";
}

export class SlackThreadOutput implements ThreadOutput {
  constructor(
    private readonly deps: ThreadOutputDeps,
    private readonly target: ThreadTarget,
  ) {}

  beginTurn(info: { readonly sessionId: string; readonly turnId: string }): TurnRenderer {
    const { target, deps } = this;
    this.remember();
    const user = typeof target.extra?.user === "string" ? target.extra.user : undefined;
    return new SlackTurnRenderer({
      clients: deps.clients,
      channel: target.channel,
      threadTs: target.thread,
      teamId: target.workspace,
      recipientUserId: user,
      kind: kindOf(target),
      capabilities: deps.capabilities,
      logger: deps.logger.child({ sessionId: info.sessionId, turnId: info.turnId }),
      ...deps.settings,
      requestStop: () => {
        if (user) deps.stopTurn(target, user);
      },
    });
  }

  async postCard(card: Card): Promise<CardRef> {
    this.remember();
    const payload = renderCard(card);
    const post = (blocks: unknown[], text: string) =>
      callWithRetry(() =>
        this.deps.clients.api.chat.postMessage({
          channel: this.target.channel,
          ...(this.target.thread ? { thread_ts: this.target.thread } : {}),
          text,
          blocks: blocks as never,
        }),
      );
    let result: Awaited<ReturnType<typeof post>>;
    try {
      result = await post(payload.blocks, payload.text);
    } catch (error) {
      if (!isPayloadError(error)) throw error;
      this.deps.logger.warn(
        { pendingId: card.pendingId },
        "slack refused the card blocks; posting it as text",
      );
      result = await post([], cardPlainText(card, TEXT_LIMIT));
    }
    if (typeof result.ts !== "string") throw new Error("chat.postMessage returned no ts for the card");
    return { messageId: result.ts, channel: this.target.channel };
  }

  async updateCard(ref: CardRef, card: Card): Promise<void> {
    const channel = typeof ref.channel === "string" ? ref.channel : this.target.channel;
    const payload = renderCard(card);
    const update = (blocks: unknown[], text: string) =>
      callWithRetry(() =>
        this.deps.clients.api.chat.update({ channel, ts: ref.messageId, text, blocks: blocks as never }),
      );
    try {
      await update(payload.blocks, payload.text);
    } catch (error) {
      if (!isPayloadError(error)) throw error;
      await update([], cardPlainText(card, TEXT_LIMIT));
    }
  }

  async postText(text: string): Promise<void> {
    this.remember();
    const mrkdwn = markdownToMrkdwn(text) || escapeMrkdwn(text);
    for (const chunk of splitMrkdwn(mrkdwn, TEXT_LIMIT)) {
      await callWithRetry(() =>
        this.deps.clients.api.chat.postMessage({
          channel: this.target.channel,
          ...(this.target.thread ? { thread_ts: this.target.thread } : {}),
          text: chunk,
          unfurl_links: false,
        }),
      );
    }
  }

  private remember(): void {
    if (this.target.thread) this.deps.threads.remember(this.target.channel, this.target.thread);
  }
}
