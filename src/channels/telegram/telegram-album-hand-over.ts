/**
 * An album: Telegram sends one as several messages, one per item, each in an update of its own.
 * Its items are gathered (telegram-albums.ts) and handed over as one message through its sender's
 * lane (telegram-hand-over.ts), every item's update noted with that hand-over
 * (telegram-hand-over-waits.ts), so webhook mode answers each once the album is recorded. Its
 * first item takes the sender's place in their lane at once, so what they send after it waits
 * behind it and their stop drops it; whether it addresses the bot, and whether its sender may use
 * the bot (telegram-admission.ts), is known only once it has closed, so an album that finds its
 * sender's lane full is refused aloud only then.
 */
import type { Update } from "grammy/types";
import { LANE_FULL } from "../shared/hand-over-lanes.js";
import { type AdmissionDeps, type Admitted, admit } from "./telegram-admission.js";
import { type AlbumCollector, albumKey } from "./telegram-albums.js";
import { errorText } from "./telegram-errors.js";
import { claimDelivery, type Delivered, handOver, laneOf, positionOf } from "./telegram-hand-over.js";
import { isAddressedToBot } from "./telegram-inbound.js";
import type { RoutingDeps } from "./telegram-lane-routing.js";

/** What an album's hand-over needs: what routing and the gate need, and where items gather. */
export interface AlbumDeps extends RoutingDeps, AdmissionDeps {
  /** Album items waiting for the rest of their album. */
  readonly albums: AlbumCollector<Delivered>;
}

/**
 * Take `delivered`, an item of album `group` that came in `update`: the first reserves its
 * sender's place in their lane, which waits for the album to close and hands it over as one
 * message when any item addresses the bot — answered on the captioned item (the first when none
 * is). Every item's update is noted with that hand-over. When the lane is full, the album is still
 * waited for, and a sender who may use the bot is told it was not taken, as for any message; so
 * are they when the channel stops before the album is handed over, unless Telegram delivers every
 * item of it again (its first alone while it is still open).
 */
export function gather(update: Update, delivered: Delivered, group: string, deps: AlbumDeps): void {
  const key = albumKey({ ...delivered.message, media_group_id: group });
  const handedOver = deps.albums.add(key, delivered, (album) => handOverAlbum(album, delivered, deps));
  if (handedOver) deps.waits.note(update, handedOver);
}

/** A closed album addressed to the bot, its sender admitted: its items, the answered one first. */
interface Ready {
  readonly admitted: Admitted;
  readonly items: readonly [Delivered, ...Delivered[]];
}

/** Once the album `delivered` is the first item of has closed: ready to hand over, or nothing. */
async function readyAlbum(
  album: Promise<readonly Delivered[]>,
  delivered: Delivered,
  deps: AlbumDeps,
): Promise<Ready | undefined> {
  const items = await album;
  if (!items.some((item) => isAddressedToBot(item.message, deps.bot()))) return undefined;
  const main = items.find((item) => item.message.caption !== undefined) ?? delivered;
  const admitted = await admit(main.message, deps);
  return admitted && { admitted, items: [main, ...items.filter((item) => item !== main)] };
}

/**
 * Queue the album `delivered` is the first item of in its sender's lane (see gather); its closing
 * is read once, by whichever of the hand-over, the full lane's refusal or the stop's note asks first.
 */
function handOverAlbum(
  album: Promise<readonly Delivered[]>,
  delivered: Delivered,
  deps: AlbumDeps,
): Promise<void> | undefined {
  let closing: Promise<Ready | undefined> | undefined;
  const closed = () => {
    closing ??= readyAlbum(album, delivered, deps);
    return closing;
  };
  let items: readonly Delivered[] = [delivered];
  void album.then((all) => {
    items = all;
  });
  const queued = deps.lanes.enqueue(
    laneOf(delivered.message),
    async (signal) => {
      const ready = await closed();
      if (ready) await handOver(ready.items, ready.admitted.target, deps, ready.admitted.tell, signal);
    },
    {
      tell: async (text) => (await closed())?.admitted.tell(text),
      redelivered: () => items.every((item) => deps.redelivers(item.updateId)),
      claimDrop: () => claimDelivery(items, deps),
      position: positionOf(delivered),
    },
  );
  if (queued) return queued;
  deps.logger.info({ chatId: delivered.message.chat.id }, "telegram: hand-over lane full, album refused");
  void closed()
    .then((ready) => ready?.admitted.tell(LANE_FULL))
    .catch((error: unknown) =>
      deps.logger.warn({ err: errorText(error) }, "telegram: album refusal could not be delivered"),
    );
  return undefined;
}
