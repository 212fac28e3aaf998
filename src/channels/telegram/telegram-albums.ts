/**
 * Albums: Telegram delivers an album (a media group) as one message per photo, video or file,
 * all with the same `media_group_id` and the caption — so the bot's mention — on one of them at
 * most. The items are gathered here per chat, topic, sender and group id (albumKey) until none
 * has come for `quietMs`, `maxWaitMs` after the first, or at Telegram's 10 items, whichever is
 * first; the first item's caller gets the whole album then, so the channel hands it over as one
 * message with all its files (addressed to the bot when any item is), and every item's caller
 * gets that hand-over to wait for. Items arriving after their
 * album closed start another. The wait runs on the channel's injected clock, so tests can close
 * albums when they choose.
 */
import type { Clock, TimerHandle } from "../../core/clock.js";
import { laneOf } from "./telegram-hand-over.js";
import type { TelegramMessage } from "./telegram-inbound.js";

export interface AlbumOptions {
  /** Close an album when no item came for this long (default 800 ms). */
  readonly quietMs?: number;
  /** Close it this long after its first item however items keep coming (default 3 s). */
  readonly maxWaitMs?: number;
}

/** Telegram's album limit. */
export const ALBUM_MAX_ITEMS = 10;

/** The album `message` is an item of, as gathered: one chat, topic and sender, one group id. */
export function albumKey(message: TelegramMessage & { readonly media_group_id: string }): string {
  return `${laneOf(message)}:${message.media_group_id}`;
}

interface OpenAlbum<T> {
  readonly items: T[];
  readonly close: () => void;
  readonly quiet: () => void;
  /** What the album's first item's caller returned for handing it over (see `add`). */
  handedOver: Promise<void> | undefined;
}

/** Gathers album items into albums (see module comment). */
export class AlbumCollector<T> {
  private readonly open = new Map<string, OpenAlbum<T>>();
  private readonly quietMs: number;
  private readonly maxWaitMs: number;

  constructor(
    private readonly clock: Clock,
    options: AlbumOptions = {},
  ) {
    this.quietMs = options.quietMs ?? 800;
    this.maxWaitMs = options.maxWaitMs ?? 3000;
  }

  /**
   * Add `item` to the open album `key` (albumKey). The album's first item starts it and calls
   * `handOver` with a promise of all its items, in the order they came, once it closes; a later
   * item joins it. Every item of an album gets what `handOver` returned: what its update waits
   * for (webhook mode answers each item's update once the album is handed over).
   */
  add(
    key: string,
    item: T,
    handOver: (album: Promise<readonly T[]>) => Promise<void> | undefined,
  ): Promise<void> | undefined {
    const joined = this.open.get(key);
    if (joined) {
      joined.items.push(item);
      joined.quiet();
      if (joined.items.length >= ALBUM_MAX_ITEMS) joined.close();
      return joined.handedOver;
    }
    let resolve!: (items: readonly T[]) => void;
    const closed = new Promise<readonly T[]>((settle) => {
      resolve = settle;
    });
    const items = [item];
    let quietTimer: TimerHandle | undefined;
    let maxTimer: TimerHandle | undefined;
    const album: OpenAlbum<T> = {
      items,
      close: () => {
        if (this.open.get(key) !== album) return;
        this.open.delete(key);
        this.clock.clearTimer(quietTimer);
        this.clock.clearTimer(maxTimer);
        resolve(items);
      },
      quiet: () => {
        if (quietTimer !== undefined) this.clock.clearTimer(quietTimer);
        quietTimer = this.clock.setTimer(album.close, this.quietMs);
      },
      handedOver: undefined,
    };
    this.open.set(key, album);
    maxTimer = this.clock.setTimer(album.close, this.maxWaitMs);
    album.quiet();
    album.handedOver = handOver(closed);
    return album.handedOver;
  }
}
