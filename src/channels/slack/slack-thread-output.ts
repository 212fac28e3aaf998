/**
 * SlackThreadOutput: the session layer's handle on one Slack thread. It starts a renderer per
 * turn, posts and updates approval / question cards (falling back to a plain-text card with the
 * typed-reply equivalents when Slack refuses the blocks; a card whose code is cut gets the whole
 * of it as a plain-text file in the thread, see card-attachment.ts) and posts short messages.
 * Every post waits out rate limits, and marks the thread as one the bot takes part in.
 */
import type { Logger } from "pino";
import type { Card, CardRef } from "../../core/card.js";
import type { ThreadOutput, TurnRenderer } from "../../core/thread-output.js";
import type { ThreadTarget } from "../../core/thread-target.js";
import { turnLogger } from "../../logging/logger.js";
import { callWithRetry, type SlackClients } from "./slack-api.js";
import type { CapabilityLatch } from "./slack-capabilities.js";
import { kindOf } from "./slack-conversation-kind.js";
import { ATTACHMENT_CAPTION, attachedFile, postCardWithAttachment } from "../shared/card-attachment.js";
import { cardPlainText, cutsCode, renderCard } from "./slack-cards.js";
import { escapeMrkdwn, SLACK_LIMITS } from "./slack-limits.js";
import { markdownToMrkdwn } from "./slack-markdown.js";
import { isPayloadError } from "./slack-pages.js";
import { type RenderSettings, SlackTurnRenderer } from "./slack-renderer.js";
import { splitMrkdwn } from "./slack-split.js";
import type { ThreadRegistry } from "./slack-threads.js";
import { NO_UNFURLS } from "./slack-unfurls.js";
import { uploadFile } from "./slack-upload.js";

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

export class SlackThreadOutput implements ThreadOutput {
  constructor(
    private readonly deps: ThreadOutputDeps,
    private readonly target: ThreadTarget,
  ) {}

  beginTurn(info: { readonly sessionId: string; readonly turnId: string }): TurnRenderer {
    const { target, deps } = this;
    this.remember();
    const user = typeof target.extra?.user === "string" ? target.extra.user : undefined;
    // Native streaming names the recipient's own team (slack-inbound.ts keeps it in `extra.team`).
    const team = typeof target.extra?.team === "string" ? target.extra.team : target.workspace;
    return new SlackTurnRenderer({
      clients: deps.clients,
      channel: target.channel,
      threadTs: target.thread,
      teamId: team,
      recipientUserId: user,
      kind: kindOf(target),
      capabilities: deps.capabilities,
      logger: turnLogger(deps.logger, info),
      ...deps.settings,
      requestStop: () => {
        if (user) deps.stopTurn(target, user);
      },
    });
  }

  async postCard(card: Card): Promise<CardRef> {
    this.remember();
    return postCardWithAttachment(
      card,
      {
        cuts: cutsCode,
        post: (shown) => this.post(shown),
        // The file is what the card points to: once it is up, a caption Slack refused (logged by
        // uploadFile) does not make it unattached.
        attach: async (_ref, file) => {
          await uploadFile(
            this.deps.clients.api,
            this.target,
            {
              data: Buffer.from(file.text, "utf8"),
              name: file.name,
              comment: ATTACHMENT_CAPTION,
              snippetType: "text",
            },
            this.deps.logger,
          );
        },
        update: (ref, shown) => this.updateCard(ref, shown),
      },
      this.deps.logger,
    );
  }

  /** Post the card's message (as text when Slack refuses its blocks). */
  private async post(card: Card): Promise<CardRef> {
    const payload = renderCard(card);
    const post = (blocks: unknown[], text: string) =>
      callWithRetry(() =>
        this.deps.clients.api.chat.postMessage({
          channel: this.target.channel,
          ...(this.target.thread ? { thread_ts: this.target.thread } : {}),
          text,
          blocks: blocks as never,
          ...NO_UNFURLS,
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
    const file = attachedFile(card, ref);
    const payload = renderCard(card, file);
    const update = (blocks: unknown[], text: string) =>
      callWithRetry(() =>
        this.deps.clients.api.chat.update({ channel, ts: ref.messageId, text, blocks: blocks as never }),
      );
    try {
      await update(payload.blocks, payload.text);
    } catch (error) {
      if (!isPayloadError(error)) throw error;
      await update([], cardPlainText(card, TEXT_LIMIT, file));
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
          ...NO_UNFURLS,
        }),
      );
    }
  }

  private remember(): void {
    if (this.target.thread) this.deps.threads.remember(this.target.channel, this.target.thread);
  }
}
