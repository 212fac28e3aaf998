/**
 * PageSync: keeps the messages of one turn in step with its view's pages. Live syncs post
 * new pages (they must land) and edit changed ones best-effort through the edits client — a 429
 * skips the beat and reports how long to back off. The final sync must land: it retries through
 * Retry-After, and when Slack refuses the payload (msg_too_long, invalid_blocks,
 * msg_blocks_too_long) it re-lays the document out in smaller pages, then as plain text, so the
 * answer is never lost.
 */
import type { Logger } from "pino";
import {
  callWithRetry,
  describeError,
  retryAfterMs,
  type SlackClients,
  slackErrorCode,
} from "./slack-api.js";
import type { TurnView } from "../shared/turn-view.js";
import { type AnswerSectioner, layoutPages, type Page, plainPages } from "./slack-document.js";
import { PAGE_BUDGET, SLACK_LIMITS } from "./slack-limits.js";
import { NO_UNFURLS } from "./slack-unfurls.js";

/** Slack's answers that mean "this payload is too big or malformed", not "try again". */
const PAYLOAD_ERRORS = new Set([
  "msg_too_long",
  "invalid_blocks",
  "invalid_blocks_format",
  "msg_blocks_too_long",
  "msg_blocks_too_many",
  "too_many_blocks",
  "no_text",
]);

/** Plain-text pages stay under chat.update's 4,000-character limit. */
const PLAIN_LIMIT = SLACK_LIMITS.updateText - 100;

const SMALLER_BUDGET = Object.freeze({ text: 4_000, blocks: 20, section: 2_000 });

/** The arguments of a page's chat.update. */
interface PageUpdate {
  readonly channel: string;
  readonly ts: string;
  readonly text: string;
  readonly blocks: Page["blocks"];
}

interface Posted {
  readonly ts: string;
  readonly signature: string;
}

export interface PageSyncOptions {
  readonly clients: SlackClients;
  readonly channel: string;
  readonly threadTs: string | undefined;
  readonly logger: Logger;
}

/** Whether an error means the payload itself was refused. */
export function isPayloadError(error: unknown): boolean {
  const code = slackErrorCode(error);
  return code !== undefined && PAYLOAD_ERRORS.has(code);
}

export class PageSync {
  private readonly posted: Posted[] = [];

  constructor(private readonly options: PageSyncOptions) {}

  /** Whether a page has been posted (or adopted) yet. */
  get started(): boolean {
    return this.posted.length > 0;
  }

  /** Take over an already posted message (a native stream's) as the first page. */
  adopt(ts: string): void {
    if (this.posted.length === 0) this.posted.push({ ts, signature: "" });
  }

  /**
   * Best-effort live sync. Resolves with the back-off the edits client was asked for (0 when
   * none); failures other than rate limits are logged and left for the final sync.
   */
  async syncLive(pages: readonly Page[]): Promise<number> {
    for (const [index, page] of pages.entries()) {
      try {
        await this.write(index, page, (update) => this.options.clients.edits.chat.update(update));
      } catch (error) {
        const wait = retryAfterMs(error);
        if (wait !== undefined) return wait;
        this.options.logger.debug({ err: describeError(error), page: index }, "slack live update skipped");
        return 0;
      }
    }
    return 0;
  }

  /**
   * The final state of the turn: must land, degrading to smaller pages and plain text. The answer
   * is laid out by `sectioner`, as the live syncs laid it out, so the pages already posted stay.
   */
  async syncFinal(view: TurnView, sectioner: AnswerSectioner): Promise<void> {
    for (const budget of [PAGE_BUDGET, SMALLER_BUDGET]) {
      try {
        await this.apply(layoutPages(view, budget, sectioner));
        return;
      } catch (error) {
        if (!isPayloadError(error)) throw error;
        this.options.logger.warn(
          { err: describeError(error) },
          "slack refused the reply layout; trying a smaller one",
        );
      }
    }
    await this.apply(plainPages(view, PLAIN_LIMIT));
  }

  private async apply(pages: readonly Page[]): Promise<void> {
    for (const [index, page] of pages.entries()) {
      await this.write(index, page, (update) =>
        callWithRetry(() => this.options.clients.api.chat.update(update)),
      );
    }
    await this.removeExtra(pages.length);
  }

  /** Post page `index`, or edit it through `update` when it changed since it was last sent. */
  private async write(
    index: number,
    page: Page,
    update: (args: PageUpdate) => Promise<unknown>,
  ): Promise<void> {
    const signature = signatureOf(page);
    const current = this.posted[index];
    if (current === undefined) return this.post(index, page, signature);
    if (current.signature === signature) return;
    await update({ channel: this.options.channel, ts: current.ts, text: page.text, blocks: page.blocks });
    this.posted[index] = { ts: current.ts, signature };
  }

  /** Pages left over from a longer earlier layout are deleted (or blanked when that fails). */
  private async removeExtra(keep: number): Promise<void> {
    while (this.posted.length > keep) {
      const extra = this.posted.pop() as Posted;
      try {
        await callWithRetry(() =>
          this.options.clients.api.chat.delete({ channel: this.options.channel, ts: extra.ts }),
        );
      } catch (error) {
        this.options.logger.debug({ err: describeError(error) }, "slack could not delete a surplus page");
        await callWithRetry(() =>
          this.options.clients.api.chat.update({
            channel: this.options.channel,
            ts: extra.ts,
            text: "…",
            blocks: [],
          }),
        );
      }
    }
  }

  private async post(index: number, page: Page, signature: string): Promise<void> {
    const result = await callWithRetry(() =>
      this.options.clients.api.chat.postMessage({
        channel: this.options.channel,
        ...(this.options.threadTs ? { thread_ts: this.options.threadTs } : {}),
        text: page.text,
        blocks: page.blocks,
        ...NO_UNFURLS,
      }),
    );
    if (typeof result.ts !== "string") throw new Error("chat.postMessage returned no ts");
    this.posted[index] = { ts: result.ts, signature };
  }
}

function signatureOf(page: Page): string {
  return JSON.stringify(page);
}
