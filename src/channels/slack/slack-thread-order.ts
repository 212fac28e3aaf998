/**
 * SlackThreadOrder: runs the work of one Slack thread's events one at a time, in arrival order
 * (slack-inbound.ts passes the claim and the access check so, so twins never pass the claim
 * together), unless their sender has too many waiting there.
 * The thread's order holds events while their checks ask Slack, so it is bounded: a sender has at
 * most ORDER_MAX_WAITING events waiting in a thread's order; past that, their event is refused
 * before any check (not claimed, so its twin may still be heard once the order has room), logged
 * without its text, and they are told privately (ORDER_FULL, ephemeral) once per burst — until
 * none of theirs waits there — so a flood makes the bot write one notice, seen by the flooder
 * alone (who may be a stranger: the access check has not run yet). The bound is per sender, not
 * per thread: a stranger flooding a thread while Slack is slow delays the others' messages there
 * by their own checks, but cannot get them refused. Senders are Slack accounts (bots not allowed
 * are dropped before the order), so a thread holds at most that many events per account posting.
 * A sender's stop is the one message that helps them when they have that many waiting (it runs
 * after those and cancels what of theirs still waits in their hand-over lane), so it is let past
 * the bound by STOP_ALLOWANCE: a flood of stops is still bounded, those few events further.
 */
import { LANE_MAX_WAITING } from "../shared/hand-over-lanes.js";

/**
 * Events one sender may have waiting in a thread's order, the one being checked included (see
 * module comment): twice their hand-over lane's cap, as a post in a channel may come as two
 * events (its message and app_mention twins), so a burst their lane would take is never refused
 * here first, and a flood waits no more than that per sender while Slack is slow.
 */
const ORDER_MAX_WAITING = 2 * LANE_MAX_WAITING;

/**
 * How many events past ORDER_MAX_WAITING a sender's stop may still take in a thread's order: the
 * two events (message and app_mention twins) of one stop posted in a channel.
 */
const STOP_ALLOWANCE = 2;

/** What a sender is told, privately and once per burst, when a thread's order refuses their message. */
export const ORDER_FULL =
  "Too many of your messages here are still waiting to be checked; this one was not taken. Send it again in a moment.";

/** How a thread's order dealt with an event: run, or refused — its sender to be told, or told already in this burst. */
export type Ordered = "ran" | "refused" | "refused, tell";

/** One sender's events waiting in a thread's order, and whether they were told it is full in this burst. */
interface Backlog {
  waiting: number;
  told: boolean;
}

export class SlackThreadOrder {
  private readonly order = new Map<string, Promise<void>>();
  /** Per thread and sender, while any of their events waits in the thread's order. */
  private readonly backlogs = new Map<string, Backlog>();

  /**
   * Run `work` in thread `thread`'s order, after the events before it — unless `sender` already
   * has ORDER_MAX_WAITING waiting there (STOP_ALLOWANCE more when the event is their stop): then
   * nothing runs (see module comment).
   */
  async run(
    thread: string,
    sender: string,
    work: () => Promise<void>,
    event: { readonly stop: boolean },
  ): Promise<Ordered> {
    const key = `${thread}:${sender}`;
    const backlog = this.backlogs.get(key) ?? { waiting: 0, told: false };
    if (backlog.waiting >= ORDER_MAX_WAITING + (event.stop ? STOP_ALLOWANCE : 0)) {
      if (backlog.told) return "refused";
      backlog.told = true;
      return "refused, tell";
    }
    backlog.waiting += 1;
    this.backlogs.set(key, backlog);
    const previous = this.order.get(thread) ?? Promise.resolve();
    const next = previous.then(work);
    this.order.set(thread, next);
    try {
      await next;
    } finally {
      if (this.order.get(thread) === next) this.order.delete(thread);
      backlog.waiting -= 1;
      if (backlog.waiting === 0) this.backlogs.delete(key);
    }
    return "ran";
  }
}
