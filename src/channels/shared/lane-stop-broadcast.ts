/**
 * Lane-stop broadcast: a sender's stop reaching their hand-over lanes (hand-over-lanes.ts) in every
 * process on one store. With several processes any of them may take a platform event (Socket Mode
 * hands each to one connection, a webhook to whichever process the balancer picks), so a person's
 * stop can land in one process while the message they sent before it is still read in another,
 * which would hand it over after the stop. The process that took the stop cancels its own lane and
 * announces the lane's key, with the stop's position in the sender's stream (lane-stop-marks.ts
 * LanePosition), on its platform's channel; every other process cancels, in the same key of its
 * lanes, what was sent before that position, and drops what was sent before it that comes later
 * (`stoppedElsewhere`: the sender told there what it dropped, if anything). An announcement
 * without a position (a process from before positions, a stop whose channel gave none) cancels
 * all the lane holds and marks nothing, as announcements always did. A process
 * skips its own announcements: its lane was cancelled as the stop came, and a message its sender
 * sent after the stop may be in it by the time the echo arrives. A message that is not an
 * announcement is logged and ignored. Built only with shared coordination: one process announces
 * nothing (laneStopsOf, which each channel builds its lanes' broadcast with). A `close` while
 * `listen` still subscribes undoes that subscription once it is made (a start aborted meanwhile
 * leaves nothing listening), and a failed subscribe is forgotten, so the next `listen` (a
 * channel's start tried again) subscribes afresh.
 */
import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import { z } from "zod";
import type { Coordination, Unsubscribe } from "../../store/coordination/coordination.js";
import type { HandOverLanes, StopsElsewhere } from "./hand-over-lanes.js";
import type { LanePosition } from "./lane-stop-marks.js";

/** What the broadcast needs of the coordination: pub/sub across the processes. */
export type LaneStopCoordination = Pick<Coordination, "publish" | "subscribe">;

/** The pub/sub channel of a platform's stops. */
export const laneStopChannel = (platform: string): string => `lane-stops:${platform}`;

/**
 * One announcement: the lane a stop cancelled, where the stop stands in its sender's stream (absent
 * from older processes' announcements: see module comment), and the broadcast that took the stop.
 */
const announcementSchema = z.object({
  from: z.string().min(1).max(100),
  lane: z.string().min(1).max(1000),
  position: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).optional(),
});

/** How a channel is given its lane stops (every channel's options, and AdapterBase that builds them). */
export interface LaneStopsOption {
  /**
   * Several processes on one store: where a person's stop is announced, so it also drops what they
   * sent before it that another process is still reading (see module comment). None without.
   */
  readonly laneStops?: LaneStopCoordination | undefined;
}

/**
 * A channel's lanes' stops elsewhere (HandOverLanes `stopsElsewhere`): a broadcast of `platform`'s
 * stops on the channel's `laneStops`, none without them (one process).
 */
export function laneStopsOf(
  { laneStops }: LaneStopsOption,
  platform: string,
  logger: Logger,
): StopsElsewhere | undefined {
  return laneStops && new LaneStopBroadcast({ coordination: laneStops, platform, logger });
}

export interface LaneStopBroadcastOptions {
  readonly coordination: LaneStopCoordination;
  /** The platform whose lanes these are ("slack", "telegram"): its keys are its own. */
  readonly platform: string;
  readonly logger: Logger;
}

/**
 * Announces this process's stops and cancels the lanes other processes' stops name (see module
 * comment); run by the lanes it is given to (HandOverLanes listen and drain).
 */
export class LaneStopBroadcast implements StopsElsewhere {
  /** Names this broadcast in its announcements, so it can skip its own. */
  private readonly from = randomUUID();
  private readonly channel: string;
  /** The current `listen`'s subscription, pending or made; a listener hears only while its own is current. */
  private listening: Promise<Unsubscribe> | undefined;

  constructor(private readonly options: LaneStopBroadcastOptions) {
    this.channel = laneStopChannel(options.platform);
  }

  /**
   * Cancel, in `lanes`, the lanes other processes' stops name, from now until `close` (rejects
   * when the subscribe fails; a `close` before it is made leaves nothing subscribed).
   */
  async listen(lanes: Pick<HandOverLanes, "stoppedElsewhere">): Promise<void> {
    if (!this.listening) {
      const listening: Promise<Unsubscribe> = this.options.coordination.subscribe(this.channel, (raw) => {
        if (this.listening === listening) this.heard(raw, lanes);
      });
      this.listening = listening;
      listening.catch(() => {
        if (this.listening === listening) this.listening = undefined;
      });
    }
    await this.listening;
  }

  /** Tell the other processes that lane `key`'s sender stopped at `position` (a failure is logged). */
  announce(key: string, position: LanePosition | undefined): void {
    const message = JSON.stringify({ from: this.from, lane: key, position });
    this.options.coordination.publish(this.channel, message).catch((error: unknown) => {
      this.options.logger.warn({ err: error }, "a stop could not be announced to the other processes");
    });
  }

  /**
   * Stop listening: also a subscription still being made, once it is. Never rejects: an
   * unsubscribe that fails (the coordination unreachable) is logged, and the listener it leaves
   * ignores what it hears, so a channel's stop or a failed start's undoing is not turned into
   * that failure.
   */
  async close(): Promise<void> {
    const listening = this.listening;
    this.listening = undefined;
    if (!listening) return;
    const unsubscribe = await listening.catch(() => undefined);
    await unsubscribe?.().catch((error: unknown) => {
      this.options.logger.warn({ err: error }, "could not stop hearing the other processes' stops");
    });
  }

  private heard(raw: string, lanes: Pick<HandOverLanes, "stoppedElsewhere">): void {
    const announcement = parse(raw);
    if (!announcement) {
      this.options.logger.warn({ channel: this.channel }, "ignoring an unreadable lane-stop announcement");
      return;
    }
    if (announcement.from !== this.from)
      void lanes.stoppedElsewhere(announcement.lane, announcement.position);
  }
}

function parse(raw: string): z.infer<typeof announcementSchema> | undefined {
  try {
    const parsed = announcementSchema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
