/**
 * Hand-over lanes: where a channel does the slow part of a message — downloading its files and
 * reading them (PDF text, transcripts) — and then hands it to the session layer. The platform's
 * per-conversation ordering (Telegram's per-chat update order, Slack's per-thread order) then
 * holds only the quick steps (access, commands, queueing here), so one person's slow file never
 * keeps another person's message, or anyone's stop, waiting. This module is the lanes as the
 * channels see them: what they route (LaneEntry), where each entry goes, and what senders are
 * told. Its parts: the queues themselves (lane-jobs.ts), the notes to the senders of what was
 * dropped (lane-drop-notes.ts), the stop marks (lane-stop-marks.ts), which commands wait
 * (lane-command-rules.ts), the stops of other processes (lane-stop-broadcast.ts) and a stopping
 * channel's drain (lane-drain.ts).
 *
 * A lane is one sender in one conversation: their messages reach the session layer in the order
 * they sent them ("here is the file", then "what does it say?"), one at a time, while other
 * senders' lanes run beside it. A lane holds at most `maxWaiting` messages; past that `enqueue`
 * refuses (the channel tells the person LANE_FULL), so nobody piles up unbounded work.
 *
 * A person's own command must not overtake what they sent before it ("voice note, then new" must
 * not put the voice note in the new session): while their lane is busy, a command waits in it,
 * except those that act on what is running now (answeredAtOnce). Their stop is answered at once
 * and cancels their lane (`route`): the messages waiting there are never handed over, and the job
 * running, unless already handing over, hands nothing over either — a stop stops what was sent
 * before it. Their commands waiting there (keptByStop: /new, /mode, …) are not dropped: they ask
 * for a setting, which a stop does not undo ("/new, then stop" still starts a fresh session), and
 * run in their turn once the cancelled jobs before them are skipped; a /skill runs a turn, so it is
 * dropped like a message. The person is told how many were dropped (droppedNote).
 * With several processes on one store, any of them may take a sender's stop while their earlier
 * message is read in another: the stop also cancels their lane (the same key) in every other
 * process (`stopsElsewhere`: lane-stop-broadcast.ts, which calls `stoppedElsewhere` there). The
 * process that took the stop answers it with its own count; one whose lane it cancelled tells the
 * sender droppedNote with its own count, through a cancelled job's way of telling its sender
 * (`tell`, the conversation of their message), and one that cancelled nothing tells nobody.
 * Each message a stop drops (here, elsewhere or late, below) is counted in what its sender is told
 * only once its drop is claimed (ClaimDrop, lane-drop-notes.ts): one message in two processes'
 * lanes (a Slack post's twins) is told once, and one handed over elsewhere that comes again late
 * (a retry, a twin) is dropped silently, as the session layer would have discarded it.
 * Processes take a sender's messages in no agreed order, so a stop names its `position` and
 * cancels only what was sent before it; its lane's stop mark (lane-stop-marks.ts) then drops a
 * message sent before it that comes late, its sender told droppedNote(1).
 * Both channels route what a sender sends through `route`, giving only their own way of handing
 * it over and answering.
 * A channel stopping gives the lanes a bounded time (`drain`), then cancels what is left and tells
 * its senders, unless the platform delivers it again, to send it again (STOPPED_NOTE; see
 * lane-drain.ts). A note that fails counts as not told (a TellSender rejects). A job that has
 * started handing its message over (LaneSignal.handingOver) is out of reach of any cancel: it is
 * never counted as dropped, nor its sender told so.
 */
import type { Logger } from "pino";
import { type Clock, systemClock } from "../../core/clock.js";
import { answeredAtOnce, keptByStop } from "./lane-command-rules.js";
import { drainLanes, type LaneStopOptions } from "./lane-drain.js";
import { DropNotes, type Telling } from "./lane-drop-notes.js";
import { type JobOptions, jobOptionsOf, type LaneJob, LaneJobs, type LaneSignal } from "./lane-jobs.js";
import { type LanePosition, LaneStopMarks, type Positioned, sentBefore } from "./lane-stop-marks.js";

// The lanes' parts' types the channels name, as the lanes give them.
export type { LaneStopOptions } from "./lane-drain.js";
export type { ClaimDrop, Telling } from "./lane-drop-notes.js";
export type { LaneJob, LaneSignal } from "./lane-jobs.js";

/** Messages one sender may have waiting for their files in one conversation. */
export const LANE_MAX_WAITING = 20;

/** What a person is told when their lane is full. */
export const LANE_FULL =
  "Too many of your messages here are still being read; this one was not taken. Send it again in a moment.";

/** What a person who stopped is told about their messages still being read, which were dropped. */
export function droppedNote(count: number): string {
  return count === 1
    ? "Your earlier message still being read was dropped."
    : `Your ${count} earlier messages still being read were dropped.`;
}

/**
 * What a person is told about each of their messages (or commands) a stopping channel dropped
 * (`drain`): its own files, or an earlier message's it waited behind, were still being read.
 */
export const STOPPED_NOTE =
  "I was restarting before I could take one of your messages here (a file was still being read). Please send it again.";

/**
 * How a sender's stop reaches their lanes in the other processes on one store (see module
 * comment; lane-stop-broadcast.ts): none with one process. The lanes run it: `listen` from their
 * own `listen`, `close` once `drain` is done, so a channel only builds it.
 */
export interface StopsElsewhere {
  /** Tell the other processes that the sender of lane `key` stopped at `position`; never rejects. */
  announce(key: string, position: LanePosition | undefined): void;
  /** Cancel in `lanes` what the other processes' stops name, until `close`; rejects when it cannot hear them. */
  listen(lanes: Pick<HandOverLanes, "stoppedElsewhere">): Promise<void>;
  /** Stop hearing the other processes' stops; never rejects. */
  close(): Promise<void>;
}

/**
 * What a sender sent, as their lane routes it (`route`), with the channel's part of handing it
 * over: their stop, `answer`ed once their lane is cancelled (`dropped`: how many of their waiting
 * entries that cancelled); a command (`name`), handed over at once unless it must wait behind
 * their earlier messages (answeredAtOnce); one handed over at once whatever it is (a command that
 * cannot run: its usage text changes nothing); or a message, which always goes through the lane
 * (its files are read there). Handed over at once, a job is never cancelled (NOT_CANCELLED).
 * What may wait in the lane comes with the channel's way of telling its sender (`tell`), which a
 * stopping channel uses for STOPPED_NOTE when it drops it (`drain`) unless the platform will
 * deliver it again (`redelivered`).
 */
export type LaneEntry =
  | ({ readonly kind: "stop"; readonly answer: (dropped: number) => Promise<void> } & Positioned)
  | ({ readonly kind: "command"; readonly name: string; readonly handOver: LaneJob } & Telling & Positioned)
  | { readonly kind: "at-once"; readonly handOver: LaneJob }
  | ({ readonly kind: "message"; readonly handOver: LaneJob } & Telling & Positioned);

/**
 * How `route` dealt with an entry: answered (handed over, or the stop answered), queued in the
 * lane (`handedOver` settles once it has run or was cancelled), or refused as the lane is full
 * (the channel tells the person LANE_FULL).
 */
export type Routed =
  | { readonly kind: "answered" }
  | { readonly kind: "queued"; readonly handedOver: Promise<void> }
  | { readonly kind: "full" };

/** The signal of an entry handed over at once: no lane's cancel reaches it. */
export const NOT_CANCELLED: LaneSignal = Object.freeze({ handingOver: () => true });

const ANSWERED: Routed = Object.freeze({ kind: "answered" });
const FULL: Routed = Object.freeze({ kind: "full" });

/** What a command's job returns when its lane was cancelled before its turn: nothing to wait for. */
const SETTLED: Promise<void> = Promise.resolve();

/** What a channel builds its lanes with. */
export interface HandOverLanesOptions {
  /** Messages one lane may hold (the running one included). */
  readonly maxWaiting: number;
  readonly logger: Logger;
  readonly stop?: LaneStopOptions | undefined;
  /** Several processes on one store: where a sender's stop is announced to the others. */
  readonly stopsElsewhere?: StopsElsewhere | undefined;
}

/** Per-sender ordered hand-over (see module comment). */
export class HandOverLanes {
  private readonly jobs: LaneJobs;
  private readonly marks: LaneStopMarks;
  private readonly notes: DropNotes;

  constructor(private readonly options: HandOverLanesOptions) {
    this.jobs = new LaneJobs(options.maxWaiting, options.logger);
    this.marks = new LaneStopMarks(this.clock(), options.logger);
    this.notes = new DropNotes(options.logger, droppedNote);
  }

  /**
   * Queue `job` behind the earlier jobs of lane `key`; resolves once it has run (or was
   * cancelled). Undefined (nothing queued) when the lane already holds `maxWaiting` jobs. Its
   * sender's stop drops it (never keptByStop: an album is a message).
   */
  enqueue(key: string, job: LaneJob, options: Partial<Telling> & Positioned = {}): Promise<void> | undefined {
    return this.queue(key, job, jobOptionsOf(options, false));
  }

  /** `enqueue` with its options in the lanes' one shape (jobOptionsOf). */
  private queue(key: string, job: LaneJob, options: JobOptions): Promise<void> | undefined {
    if (this.late(key, options.position, options.keptByStop === true)) return this.droppedLate(options);
    return this.jobs.add(key, job, options);
  }

  /**
   * Route the sender's `entry` through their lane `key` (see module comment): a stop cancels the
   * lane, then is answered; a command is answered at once when it may (answeredAtOnce) or the lane
   * is idle, else it waits there like a message; a message is queued. Both channels route here.
   */
  async route(key: string, entry: LaneEntry): Promise<Routed> {
    if (entry.kind === "stop") {
      // What the person sent before their stop is stopped too: never handed over after it, here
      // or in another process.
      const dropped = this.stopLane(key, entry.position);
      this.options.stopsElsewhere?.announce(key, entry.position);
      await entry.answer((await this.notes.claimed(dropped)).length);
      return ANSWERED;
    }
    // A command sent before a stop already taken goes to the lane, which drops it unless kept.
    const atOnce =
      entry.kind === "at-once" ||
      (entry.kind === "command" &&
        !this.late(key, entry.position, keptByStop(entry.name)) &&
        (answeredAtOnce(entry.name) || !this.jobs.busy(key)));
    if (atOnce) {
      await entry.handOver(NOT_CANCELLED);
      return ANSWERED;
    }
    // A command is handed over as soon as its turn comes (nothing to read first).
    const job: LaneJob =
      entry.kind === "command"
        ? (signal) => (signal.handingOver() ? entry.handOver(signal) : SETTLED)
        : entry.handOver;
    const kept = entry.kind === "command" && keptByStop(entry.name);
    const handedOver = this.queue(key, job, jobOptionsOf(entry, kept));
    return handedOver ? { kind: "queued", handedOver } : FULL;
  }

  /**
   * The sender's stop at `position`, taken by another process (see module comment): cancel lane
   * `key` as their stop here does, and tell its sender how many were dropped, through a cancelled job's
   * own way of telling them; nobody when nothing was cancelled. Never rejects: a failed note is logged.
   */
  async stoppedElsewhere(key: string, position: LanePosition | undefined): Promise<void> {
    const dropped = this.stopLane(key, position);
    if (dropped.length === 0) return;
    this.options.logger.info(
      { dropped: dropped.length },
      "hand-over lane cancelled by a stop taken elsewhere",
    );
    await this.notes.tellDropped(dropped);
  }

  /**
   * The sender's stop at `position`: abort the jobs of lane `key` sent before it but those kept by
   * a stop, and mark the lane stopped through it; those it aborted.
   */
  private stopLane(key: string, position: LanePosition | undefined): readonly JobOptions[] {
    if (position !== undefined) this.marks.mark(key, position);
    return this.jobs.abort(key, (job) => job.keptByStop !== true && sentBefore(job.position, position));
  }

  /** Whether a job at `position` of lane `key`, not kept by a stop, was sent before a stop already taken. */
  private late(key: string, position: LanePosition | undefined, kept: boolean): boolean {
    return !kept && this.marks.late(key, position);
  }

  /** A job sent before a stop already taken: never run; its sender is told it was dropped (ClaimDrop). */
  private async droppedLate(options: JobOptions): Promise<void> {
    this.options.logger.info("hand-over dropped: its message was sent before a stop already taken");
    await this.notes.tellDropped([options]);
  }

  private clock(): Clock {
    return this.options.stop?.clock ?? systemClock;
  }

  /**
   * Before the channel's first message: hear the stops other processes take (`stopsElsewhere`;
   * nothing with one process). Rejects when they cannot be heard, which a `drain` undoes.
   */
  async listen(): Promise<void> {
    await this.options.stopsElsewhere?.listen(this);
  }

  /**
   * A channel stopping (called once it receives no more): give the lanes a bounded time, then
   * cancel what is left and tell its senders STOPPED_NOTE unless the platform delivers it again
   * (lane-drain.ts). Then the other processes' stops are no longer heard (also after a failed
   * `listen`).
   */
  async drain(): Promise<void> {
    try {
      await drainLanes({
        jobs: this.jobs,
        notes: this.notes,
        note: STOPPED_NOTE,
        stop: this.options.stop,
        logger: this.options.logger,
      });
    } finally {
      await this.options.stopsElsewhere?.close();
    }
  }
}
