/**
 * LatestThreads: the thread each person last talked to the bot in, per workspace and channel — the
 * thread a /coworker command typed in that channel acts on (Slack does not send slash commands from
 * inside threads). Keyed by workspace + channel + person: only that person's own accepted messages
 * move it, never anyone else's.
 *
 * One process keeps it in memory (bounded). Several processes on one store keep it there instead,
 * under a TTL: any of them may take the person's message and another their command, so each
 * accepted message is written (one small write, not awaited by the message), and the command reads
 * the store — never a copy in memory, which could name a thread the person has since left for one
 * another process saw (the write cannot be skipped when it names the thread this process last
 * wrote: another process may have written a newer one since). A failed write is logged; a failed
 * read rejects (the command apologises rather than guess a thread).
 */
import { createHash } from "node:crypto";
import type { Logger } from "pino";
import { z } from "zod";
import { LruCache } from "../../sessions/lru.js";
import type { KeyValueSpace } from "../../store/store.js";
import { fromVersioned, toVersioned } from "../../store/versioned.js";

/** How long a shared record lasts after the person's last message in that channel. */
const LATEST_THREAD_TTL_MS = 7 * 24 * 60 * 60 * 1000;

const KIND = "slack-latest-thread";
/** A Slack message ts: seconds, a dot, microseconds. */
const recordSchema = z.object({ thread: z.string().regex(/^\d{1,12}\.\d{1,9}$/) });

export interface LatestThreadsOptions {
  /** The workspace every place of this channel is in (the installation's team; known after start). */
  readonly workspace: () => string | undefined;
  /** Several processes on one store: the space the records are shared in. Memory only without it. */
  readonly shared?: KeyValueSpace;
  readonly logger: Logger;
  /** Memory-only capacity (default 50,000 people × channels). */
  readonly capacity?: number;
}

export class LatestThreads {
  private readonly memory: LruCache<string, string>;

  constructor(private readonly options: LatestThreadsOptions) {
    this.memory = new LruCache(options.capacity ?? 50_000);
  }

  /** The person's latest thread in `channel` is now `thread`. Never rejects (a failed write is logged). */
  async record(channel: string, userId: string, thread: string): Promise<void> {
    const key = this.keyOf(channel, userId);
    if (key === undefined) return;
    const { shared } = this.options;
    if (!shared) return void this.memory.set(key, thread);
    try {
      await shared.set(key, toVersioned(KIND, { thread }), LATEST_THREAD_TTL_MS);
    } catch (error) {
      this.options.logger.warn(
        { err: error instanceof Error ? error.message : String(error), slackChannel: channel },
        "slack could not store a person's latest thread",
      );
    }
  }

  /** The person's latest thread in `channel`, if known. Rejects when the shared store cannot be read. */
  async latest(channel: string, userId: string): Promise<string | undefined> {
    const key = this.keyOf(channel, userId);
    if (key === undefined) return undefined;
    const { shared } = this.options;
    if (!shared) return this.memory.get(key);
    const raw = await shared.get(key);
    return raw === undefined ? undefined : fromVersioned(raw, { kind: KIND, schema: recordSchema }).thread;
  }

  /** The key of one person in one channel: the ids hashed, so any length fits the store's key limit. */
  private keyOf(channel: string, userId: string): string | undefined {
    const workspace = this.options.workspace();
    if (workspace === undefined) return undefined;
    const ids = JSON.stringify([workspace, channel, userId]);
    return `slack:latest-thread:${createHash("sha256").update(ids).digest("base64url")}`;
  }
}
