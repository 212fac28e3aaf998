/**
 * ThreadRegistry: which Slack threads the bot is part of, so a thread reply without a mention
 * continues the conversation. Local knowledge first (threads the bot accepted a message in or
 * posted into during this process, bounded), then — for threads it has no record of, as after a
 * restart — the session layer's optional `hasSession`. A person's accepted message also moves
 * their latest thread in that channel, which LatestThreads keeps (slack-latest-threads.ts).
 */
import type { ConversationService } from "../../sessions/contracts.js";
import type { ThreadTarget } from "../../core/thread-target.js";
import { LruCache } from "../../core/lru-cache.js";
import type { LatestThreads } from "./slack-latest-threads.js";

export class ThreadRegistry {
  private readonly threads: LruCache<string, true>;
  /** Channels the bot left: their threads no longer count (until it takes part again). */
  private readonly left = new Map<string, number>();

  constructor(
    private readonly service: Pick<ConversationService, "hasSession">,
    private readonly latest: Pick<LatestThreads, "record">,
    capacity = 50_000,
  ) {
    this.threads = new LruCache(capacity);
  }

  /** The bot takes part in this thread. */
  remember(channel: string, threadTs: string): void {
    this.left.delete(channel);
    this.threads.set(`${channel}:${threadTs}`, true);
  }

  /** The bot left (or was removed from) a channel: forget its threads there. */
  forgetChannel(channel: string): void {
    this.left.set(channel, Date.now());
  }

  /** Whether the bot takes part in the target's thread (asking the session layer on a miss). */
  async isPartOf(target: ThreadTarget): Promise<boolean> {
    if (target.thread === undefined || this.left.has(target.channel)) return false;
    if (this.threads.get(`${target.channel}:${target.thread}`)) return true;
    if (!this.service.hasSession) return false;
    const known = await this.service.hasSession(target);
    if (known) this.remember(target.channel, target.thread);
    return known;
  }

  /**
   * Record the thread a person last talked to the bot in, in this channel, by their message at
   * Slack ts `at` (not awaited: the write never rejects, and the message does not wait for it).
   */
  rememberLatest(channel: string, userId: string, threadTs: string, at: string): void {
    void this.latest.record(channel, userId, threadTs, at);
  }
}
