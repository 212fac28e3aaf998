/**
 * LatestThreads: the thread each person last talked to the bot in, per workspace and channel — the
 * thread a /coworker command typed in that channel acts on (Slack does not send slash commands from
 * inside threads). Keyed by workspace + channel + person: only that person's own accepted messages
 * move it, never anyone else's.
 *
 * One process keeps it in memory (bounded). Several processes on one store keep it there instead:
 * any of them may take the person's message and another their command, so each accepted message
 * is written (one small write, not awaited by the message), and the command reads the store —
 * never a copy in memory, which could name a thread the person has since left for one another
 * process saw (the write cannot be skipped when it names the thread this process last wrote:
 * another process may have written a newer one since). A failed write is logged; a failed read
 * rejects (the command apologises rather than guess a thread).
 *
 * Writes land after each message's hand-over, so out of order (an earlier message with a slow
 * file lands last): each record carries its message's Slack ts (`at`, which orders messages in a
 * channel) and is replaced only by a newer message's, by compare-and-set — in memory the same.
 * Records expire LATEST_THREAD_TTL_MS after their write, and a reader ignores one whose message is
 * older than that (a message handed over late, a record written before records expired). Records
 * from before `at` and unreadable ones count as oldest: any message's record replaces them.
 */
import { createHash } from "node:crypto";
import type { Logger } from "pino";
import { z } from "zod";
import { LruCache } from "../../core/lru-cache.js";
import type { KeyValueSpace } from "../../store/store.js";
import { updateByCompareAndSet } from "../../store/update-by-compare-and-set.js";
import { fromVersioned, toVersioned } from "../../store/versioned.js";

/** How long a record counts (and is kept) after the person's last message in that channel. */
const LATEST_THREAD_TTL_MS = 7 * 24 * 60 * 60 * 1000;

const KIND = "slack-latest-thread";
/** How often a write re-reads and retries when other processes wrote the record meanwhile. */
const MAX_WRITE_ATTEMPTS = 5;
/** A Slack message ts: seconds, a dot, microseconds. */
const slackTs = z.string().regex(/^\d{1,12}\.\d{1,9}$/);
/** `at`: the ts of the message that set it (absent in records from before it, read as oldest). */
const recordSchema = z.object({ thread: slackTs, at: slackTs.optional() });
type LatestRecord = z.infer<typeof recordSchema>;

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
  private readonly memory: LruCache<string, Required<LatestRecord>>;

  constructor(private readonly options: LatestThreadsOptions) {
    this.memory = new LruCache(options.capacity ?? 50_000);
  }

  /**
   * The person's message `at` (its Slack ts) in `channel` was in `thread`: it becomes their latest
   * unless a newer message's is already recorded. Never rejects (a failed write is logged).
   */
  async record(channel: string, userId: string, thread: string, at: string): Promise<void> {
    const key = this.keyOf(channel, userId);
    if (key === undefined) return;
    const { shared } = this.options;
    if (!shared) {
      const current = this.memory.peek(key);
      if (current === undefined || isNewer(at, current.at)) this.memory.set(key, { thread, at });
      return;
    }
    try {
      await this.recordShared(shared, key, { thread, at });
    } catch (error) {
      this.options.logger.warn(
        { err: error instanceof Error ? error.message : String(error), slackChannel: channel },
        "slack could not store a person's latest thread",
      );
    }
  }

  private async recordShared(
    shared: KeyValueSpace,
    key: string,
    next: Required<LatestRecord>,
  ): Promise<void> {
    const value = toVersioned(KIND, next);
    const result = await updateByCompareAndSet(
      shared,
      key,
      // None, one from before `at` or an unreadable one (oldest): replaced; else only by a newer message's.
      (raw) => (raw === undefined || isNewer(next.at, readableRecord(raw)?.at) ? value : undefined),
      { attempts: MAX_WRITE_ATTEMPTS, ttlMs: LATEST_THREAD_TTL_MS },
    );
    if (result.outcome === "gave-up")
      throw new Error(`other processes wrote it ${result.attempts} times meanwhile`);
  }

  /** The person's latest thread in `channel`, if known. Rejects when the shared store cannot be read. */
  async latest(channel: string, userId: string): Promise<string | undefined> {
    const key = this.keyOf(channel, userId);
    if (key === undefined) return undefined;
    const { shared } = this.options;
    if (!shared) return this.memory.get(key)?.thread;
    const raw = await shared.get(key);
    if (raw === undefined) return undefined;
    const { thread, at } = fromVersioned(raw, { kind: KIND, schema: recordSchema });
    return at !== undefined && Number(at) * 1000 < Date.now() - LATEST_THREAD_TTL_MS ? undefined : thread;
  }

  /**
   * The key of one person in one channel: the ids themselves in memory; in the store hashed, so any
   * length fits its key limit.
   */
  private keyOf(channel: string, userId: string): string | undefined {
    const workspace = this.options.workspace();
    if (workspace === undefined) return undefined;
    const ids = JSON.stringify([workspace, channel, userId]);
    if (!this.options.shared) return ids;
    return `slack:latest-thread:${createHash("sha256").update(ids).digest("base64url")}`;
  }
}

/** A stored record, or undefined when it cannot be read (a write replaces it; a read rejects). */
function readableRecord(raw: unknown): LatestRecord | undefined {
  try {
    return fromVersioned(raw, { kind: KIND, schema: recordSchema });
  } catch {
    return undefined;
  }
}

/** Whether Slack ts `a` is later than `b` (an absent `b` is oldest): seconds, then the fraction. */
function isNewer(a: string, b: string | undefined): boolean {
  if (b === undefined) return true;
  const [aSeconds = "", aFraction = ""] = a.split(".");
  const [bSeconds = "", bFraction = ""] = b.split(".");
  if (aSeconds.length !== bSeconds.length) return aSeconds.length > bSeconds.length;
  return `${aSeconds}.${aFraction.padEnd(9, "0")}` > `${bSeconds}.${bFraction.padEnd(9, "0")}`;
}
