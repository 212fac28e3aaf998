/**
 * Lane stop marks: where each hand-over lane's last stop went through (hand-over-lanes.ts). With
 * several processes, a stop names its position (where the stop message stands in the sender's
 * stream on the platform; see LanePosition) and cancels only what was sent before it. The lane then
 * keeps a "stopped through" mark, for a while (MARK_MS), so a message sent before the
 * stop that reaches a process only after it (a lagging process, a platform's redelivery) is dropped
 * as it comes (`late`). Marks are bounded (MAX_MARKS live lanes), expired marks
 * forgotten first, and past that a new lane's mark is not kept (logged) rather than forget another
 * lane's live one. A job or
 * stop without a position (a channel that gives none, an older process's announcement) is treated
 * as before positions existed: such a stop marks nothing, and such a job is sent before any stop
 * (`sentBefore`) — the stop wins whenever the order is not known.
 */
import type { Logger } from "pino";
import type { Clock } from "../../core/clock.js";

/**
 * Where a message stands in its sender's stream on the platform: a later message has a larger one.
 * Compared only within one lane (one sender, one conversation), so each channel picks what its
 * platform orders there: Slack the channel's message ts, as microseconds (slack-lanes.ts
 * positionOf); Telegram the chat's message_id (telegram-hand-over.ts positionOf). A non-negative
 * safe integer, so it travels in an announcement as it is.
 */
export type LanePosition = number;

/** Where an entry stands in its sender's stream (LanePosition); unknown when unset (see module comment). */
export interface Positioned {
  readonly position?: LanePosition | undefined;
}

/** How long a lane remembers the position a stop went through: 10 minutes. */
const MARK_MS = 10 * 60_000;

/**
 * How many lanes' stop marks are kept at most. Expired marks are forgotten first; when that many
 * are still live, a new lane's mark is not kept (logged), and no live mark is ever forgotten for
 * it. A mark missing lets a late earlier message of its lane through, as before marks existed;
 * forgetting the oldest live mark instead would let one sender's flood of stops (in Slack each
 * top-level "@bot stop" is a lane of its own) take other people's marks away. Refusing keeps every
 * mark made, and a flood leaves only the stops made while it lasts without one, for at most MARK_MS.
 */
const MAX_MARKS = 10_000;

/** Whether a job at `job` was sent before a stop at `stop`: yes whenever either is unknown (the stop wins). */
export function sentBefore(job: LanePosition | undefined, stop: LanePosition | undefined): boolean {
  return job === undefined || stop === undefined || job < stop;
}

/** The position a lane's last stop went through, remembered until `until` (clock time). */
interface StopMark {
  readonly through: LanePosition;
  readonly until: number;
}

/** The lanes' stop marks, by lane key (see module comment). */
export class LaneStopMarks {
  /** Per lane, the position its last stop went through; soonest to expire first. */
  private readonly marks = new Map<string, StopMark>();

  constructor(
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /**
   * Remember that lane `key` was stopped through `position`, for MARK_MS, among MAX_MARKS lanes
   * at most: expired marks are forgotten first, and a new lane's mark is not kept when that many
   * are live (see MAX_MARKS); a lane's own mark is always refreshed.
   */
  mark(key: string, position: LanePosition): void {
    const now = this.clock.now();
    const through = Math.max(position, this.markOf(key)?.through ?? position);
    // Deleted first so the refreshed mark is the last in the map's order, the last to expire.
    this.marks.delete(key);
    for (const [oldest, mark] of this.marks) {
      if (mark.until > now) break;
      this.marks.delete(oldest);
    }
    if (this.marks.size >= MAX_MARKS) {
      this.logger.warn(
        { marks: this.marks.size },
        "too many lanes stopped lately: this stop keeps no mark, so a message sent before it that comes late is not dropped",
      );
      return;
    }
    this.marks.set(key, { through, until: now + MARK_MS });
  }

  /** Whether a job at `position` of lane `key` was sent before a stop already taken there (its mark live). */
  late(key: string, position: LanePosition | undefined): boolean {
    const mark = position === undefined ? undefined : this.markOf(key);
    return mark !== undefined && position !== undefined && position < mark.through;
  }

  /** Lane `key`'s stop mark unless it has expired (an expired one is forgotten). */
  private markOf(key: string): StopMark | undefined {
    const mark = this.marks.get(key);
    if (mark && mark.until <= this.clock.now()) {
      this.marks.delete(key);
      return undefined;
    }
    return mark;
  }
}
