/**
 * Pending rebuild: the batches of matched messages subscriptions were not woken for yet, rebuilt
 * from the buffer after each one's wake marker (or since it began watching) — at open, for the
 * batches pending when the process stopped, and with several processes periodically, for the
 * overdue ones a stopped process left (pending-sweep.ts). The subscriptions of one channel are
 * served from one read of their wake markers and one read of its buffer, from the earliest point
 * any of them needs; each then takes what lies after its own marker. So a sweep costs two reads
 * per channel, not two per subscription. A channel whose reads fail is reported and the others
 * go on.
 */
import type { KeyValueSpace } from "../store/store.js";
import { type BufferPosition, isAfter, positionOf } from "./buffer-entry.js";
import type { ChannelBuffer } from "./channel-buffer.js";
import type { ReadOptions } from "./channel-buffer-read.js";
import type { DirectoryLookup } from "./channel-access.js";
import { channelKeyOf, type Subscription, watchedSince } from "./subscription.js";
import type { WakeScheduler } from "./wake-scheduler.js";
import { readWokenMany } from "./wake-markers.js";
import { wakesSubscription } from "./wake-rule.js";

export interface PendingRebuildDeps {
  /** The "subscriptions" space, where the wake markers are (wake-markers.ts). */
  readonly markers: KeyValueSpace;
  readonly directories: DirectoryLookup;
  readonly buffer: ChannelBuffer;
  /** Messages kept per channel buffer: a read of this many returns all a buffer holds. */
  readonly bufferMaxMessages: number;
  /** Where rebuilt batches are scheduled. */
  readonly scheduler: Pick<WakeScheduler, "add">;
  readonly onError: (error: unknown, context: string) => void;
}

export interface PendingRebuildOptions {
  /** Only matches buffered at or before this time (ms; sent, for entries that do not say when they were buffered). */
  readonly bufferedBy?: number;
  /** Checked before each channel: true ends the rebuild (the sweep is closing). */
  readonly stopped?: () => boolean;
}

/** A subscription and its wake marker: its pending matches are after the marker, else since it began watching. */
interface Start {
  readonly subscription: Subscription;
  readonly woken: BufferPosition | undefined;
}

/** Re-schedule the subscriptions' matches not woken for yet (see the module comment). Never rejects. */
export async function rebuildPending(
  deps: PendingRebuildDeps,
  subscriptions: readonly Subscription[],
  options: PendingRebuildOptions = {},
): Promise<void> {
  const byChannel = new Map<string, Subscription[]>();
  for (const subscription of subscriptions) {
    const key = channelKeyOf(subscription.channelRef);
    const watching = byChannel.get(key);
    if (watching) watching.push(subscription);
    else byChannel.set(key, [subscription]);
  }
  for (const [channelKey, watching] of byChannel) {
    if (options.stopped?.()) return;
    await rebuildChannel(deps, channelKey, watching, options.bufferedBy);
  }
}

/** One channel's part of `rebuildPending`: one read of the markers and one of the buffer for all of `watching`. */
async function rebuildChannel(
  deps: PendingRebuildDeps,
  channelKey: string,
  watching: readonly Subscription[],
  bufferedBy: number | undefined,
): Promise<void> {
  try {
    const starts = await startsOf(deps, watching);
    const first = starts[0];
    if (!first) return;
    const read = await deps.buffer.read(channelKey, {
      ...coveringStart(starts),
      limit: deps.bufferMaxMessages,
    });
    if (!read) return;
    const ref = first.subscription.channelRef;
    const bot = deps.directories.find(ref.platform, ref.workspace)?.bot;
    const overdue =
      bufferedBy === undefined
        ? read.entries
        : read.entries.filter((entry) => Date.parse(entry.bufferedAt ?? entry.at) <= bufferedBy);
    for (const { subscription, woken } of starts) {
      const sinceMs = Date.parse(watchedSince(subscription));
      for (const entry of overdue) {
        const pending = woken ? isAfter(entry, read.epoch, woken) : Date.parse(entry.at) >= sinceMs;
        if (!pending || !wakesSubscription(subscription, entry, bot)) continue;
        deps.scheduler.add(subscription.id, subscription.sessionId, {
          entry,
          position: positionOf(entry, read.epoch),
        });
      }
    }
  } catch (error) {
    deps.onError(error, `rebuilding pending wake-ups in ${channelKey}`);
  }
}

/**
 * The wake markers of `watching`, read in one round trip (a failing read rejects: the channel's
 * failure); a subscription whose marker cannot be read is reported and left out.
 */
async function startsOf(deps: PendingRebuildDeps, watching: readonly Subscription[]): Promise<Start[]> {
  const reads = await readWokenMany(
    deps.markers,
    watching.map((s) => s.id),
  );
  const starts: Start[] = [];
  for (const [at, subscription] of watching.entries()) {
    const read = reads[at];
    if (read?.ok) starts.push({ subscription, woken: read.woken });
    else deps.onError(read?.error, `rebuilding pending wake-ups of subscription ${subscription.id}`);
  }
  return starts;
}

/**
 * Where one read of the buffer holds every start's pending matches: after the earliest marker
 * when all have markers of one buffer incarnation (its earliest seq and time: a marker of an
 * incarnation since dropped is compared by time), since the earliest start of watching when none
 * has a marker, else the whole buffer.
 */
function coveringStart(starts: readonly Start[]): Pick<ReadOptions, "after" | "since"> {
  const markers = starts.flatMap(({ woken }) => (woken ? [woken] : []));
  const [marker] = markers;
  if (marker && markers.length === starts.length && markers.every((m) => m.epoch === marker.epoch)) {
    const seq = Math.min(...markers.map((m) => m.seq));
    const atMs = Math.min(...markers.map((m) => Date.parse(m.at)));
    return { after: { epoch: marker.epoch, seq, at: new Date(atMs).toISOString() } };
  }
  if (markers.length === 0) {
    const sinceMs = Math.min(...starts.map(({ subscription }) => Date.parse(watchedSince(subscription))));
    return { since: new Date(sinceMs).toISOString() };
  }
  return {};
}
