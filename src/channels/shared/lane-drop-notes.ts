/**
 * Drop notes: telling a sender that messages of theirs were dropped from their hand-over lane
 * (hand-over-lanes.ts) — by their stop, here or in another process, or by a stopping channel —
 * each message once, and never one that went through. With several processes (or a platform that
 * delivers one message as several events: Slack's twins, its retries) one message may be dropped
 * in two lanes, or dropped in one after another process handed it over, so each drop is claimed
 * first (ClaimDrop: the session layer's shared record of deliveries) and told only when its claim
 * wins, or cannot be made (then telling is the safer error). The claims of one stop's drops are
 * made all at once, so answering a stop waits about one store round trip, not one per message. Kept
 * apart from the lanes: it holds what is said to whom, the lanes what is cancelled. The notes'
 * words are the lanes' and come in from them (droppedNote once, STOPPED_NOTE as text). A note
 * that fails is logged: nobody else can tell the sender.
 */
import type { Logger } from "pino";

/** How the channel tells a sender something in the conversation of their message; rejects when it could not. */
export type TellSender = (text: string) => Promise<void>;

/**
 * Claims the telling of a sender that one message of theirs was dropped (droppedNote; STOPPED_NOTE
 * when the channel stops):
 * false when it went through elsewhere, or its drop is told already — with several processes (or
 * when a platform delivers one message as several events: Slack's twins, its retries), one
 * message may be in two lanes, or come late to one after another process handed it over. The
 * channel claims its message in the session layer's shared record of deliveries
 * (ConversationService.firstDelivery), under the one id every delivery of it shares: taken once,
 * and taken already when it was handed over. Rejects when it cannot say: then the sender is told.
 */
export type ClaimDrop = () => Promise<boolean>;

/**
 * Asked by `drain` once the channel has stopped receiving: whether the platform will deliver the
 * dropped message again (a Telegram webhook update left unanswered), so its sender is not told.
 */
export type Redelivered = () => boolean;

/** How the sender of an entry is told when a stop or a stopping channel's `drain` drops it (hand-over-lanes.ts LaneEntry). */
export interface Telling {
  /** Their conversation: droppedNote when a stop drops it, STOPPED_NOTE when `drain` does. */
  readonly tell: TellSender;
  /** Whether the platform delivers it again after the channel stopped: then `drain` tells nobody; never when unset. */
  readonly redelivered?: Redelivered | undefined;
  /** Whether its sender is told when a stop or `drain` drops it (ClaimDrop); always when unset. */
  readonly claimDrop?: ClaimDrop | undefined;
}

/** How the sender of a dropped job is told of it (Telling; nobody without `tell`). */
export type Dropped = Partial<Telling>;

/**
 * How far a stopping channel's notes went (`tellEach`): those told, those whose message was
 * handed over elsewhere (their claim lost: not told), of those `telling` to tell. Read while
 * notes are still on their way, it counts what has settled so far.
 */
export interface DropTally {
  readonly telling: number;
  told: number;
  handedOverElsewhere: number;
}

/** Claims dropped messages and tells their senders (see module comment). */
export class DropNotes {
  /** `droppedNote`: the lanes' words for how many of a sender's messages their stop dropped. */
  constructor(
    private readonly logger: Logger,
    private readonly droppedNote: (count: number) => string,
  ) {}

  /**
   * Of `dropped`, those whose sender is told of them: each one's drop claimed (ClaimDrop), all the
   * claims at once; one without a claim, or whose claim fails (logged), is told.
   */
  async claimed<T extends Dropped>(dropped: readonly T[]): Promise<readonly T[]> {
    const claims = await Promise.all(dropped.map((job) => this.claims(job)));
    return dropped.filter((_, index) => claims[index]);
  }

  /**
   * Tell the sender whose stop dropped `dropped` how many of them were (droppedNote), once their
   * drops are claimed, through the first one's way of telling that has one; nobody when none is
   * claimed. Never rejects: a failed note is logged.
   */
  async tellDropped(dropped: readonly Dropped[]): Promise<void> {
    const told = await this.claimed(dropped);
    if (told.length === 0) return;
    try {
      await told.find((job) => job.tell !== undefined)?.tell?.(this.droppedNote(told.length));
    } catch (error) {
      this.logger.warn({ err: error }, "a sender who stopped could not be told what was dropped");
    }
  }

  /**
   * A stopping channel's notes: tell each of `dropped` that has a `tell` its `text`, once its drop
   * is claimed, all at once. `done` settles when every note has (it never rejects: a failed note
   * is logged, and counts as not told); `tally` counts meanwhile.
   */
  tellEach(
    dropped: readonly Dropped[],
    text: string,
  ): { readonly tally: DropTally; readonly done: Promise<void> } {
    const telling = dropped.filter((job) => job.tell !== undefined);
    const tally: DropTally = { telling: telling.length, told: 0, handedOverElsewhere: 0 };
    const notes = telling.map(async (job) => {
      if (!(await this.claims(job))) {
        tally.handedOverElsewhere += 1;
        return;
      }
      try {
        await job.tell?.(text);
        tally.told += 1;
      } catch (error) {
        this.logger.warn({ err: error }, "a dropped message's sender could not be told");
      }
    });
    return { tally, done: Promise.all(notes).then(() => undefined) };
  }

  /** Whether a dropped job's sender is told of it: its claim's answer; yes without one or when it fails (logged). */
  private async claims({ claimDrop }: Dropped): Promise<boolean> {
    try {
      return (await claimDrop?.()) ?? true;
    } catch (error) {
      this.logger.warn({ err: error }, "could not tell whether a dropped message was handed over elsewhere");
      return true;
    }
  }
}
