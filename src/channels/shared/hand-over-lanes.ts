/**
 * Hand-over lanes: where a channel does the slow part of a message — downloading its files and
 * reading them (PDF text, transcripts) — and then hands it to the session layer. The platform's
 * per-conversation ordering (Telegram's per-chat sequentialize, Slack's per-thread order) then
 * holds only the quick steps (access, commands, queueing here), so one person's slow file never
 * keeps another person's message, or anyone's stop, waiting.
 *
 * A lane is one sender in one conversation: their messages reach the session layer in the order
 * they sent them ("here is the file", then "what does it say?"), one at a time, while other
 * senders' lanes run beside it. A lane holds at most `maxWaiting` messages; past that `enqueue`
 * refuses (the channel tells the person LANE_FULL), so nobody piles up unbounded work. A job's
 * failure is logged and its lane goes on.
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
 * only once its drop is claimed (`claimDrop`, ClaimDrop): one message in two processes' lanes (a
 * Slack post's twins) is told once, and one handed over elsewhere that comes again late (a
 * retry, a twin) is dropped silently, as the session layer would have discarded it.
 * Processes take a sender's messages in no agreed order, so a stop names its `position` and
 * cancels only what was sent before it; its lane's stop mark (lane-stop-marks.ts) then drops a
 * message sent before it that comes late, its sender told droppedNote(1).
 * Both channels route what a sender sends through `route`, giving only their own way of handing
 * it over and answering.
 * A channel stopping gives the lanes a bounded time (`drain`), then cancels what is left. Where
 * the platform took a message as delivered already (Slack acknowledged, a polled Telegram update
 * confirmed, a webhook update answered at its deadline), no other process gets it, so its sender
 * is told in its conversation that it was not taken and should be sent again (STOPPED_NOTE,
 * through the channel's own way of answering, for a bounded time too, so a slow platform cannot
 * hold the shutdown) once its drop is claimed (`claimDrop`), as a stop's is: one handed over
 * elsewhere (a Slack post's twin) is dropped silently, or its resend would be a second turn. Where the platform will deliver it again (a webhook update not answered yet:
 * `redelivered`), its sender is not told: their resend would come besides the redelivery, a
 * second turn. A note that fails counts as not told (a TellSender rejects). A job that has
 * started handing its message over (LaneSignal.handingOver) is out of reach of any cancel: it is
 * never counted as dropped, nor its sender told so.
 */
import type { Logger } from "pino";
import { type Clock, systemClock } from "../../core/clock.js";
import { answeredAtOnce, keptByStop } from "./lane-command-rules.js";
import { type LanePosition, LaneStopMarks, type StopMarkLimits, sentBefore } from "./lane-stop-marks.js";

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
 * What a job sees of its lane's cancelling: once its message is ready (files read), it asks
 * `handingOver()`. False: the lane was cancelled meanwhile (the sender's stop, the channel
 * stopping), so it hands nothing over. True: it hands over now, and no later cancel reaches it —
 * it is not counted as dropped, nor its sender told so. Not an AbortSignal: jobs only ask this
 * once, and a message is not worth an AbortController.
 */
export interface LaneSignal {
  handingOver(): boolean;
}

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

/** A lane's job (see LaneSignal). */
export type LaneJob = (signal: LaneSignal) => Promise<void>;

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

/** Where an entry stands in its sender's stream (LanePosition); unknown when unset (see module comment). */
export interface Positioned {
  readonly position?: LanePosition | undefined;
}

/** How the sender of an entry is told when a stop or a stopping channel's `drain` drops it (see LaneEntry). */
export interface Telling {
  /** Their conversation: droppedNote when a stop drops it, STOPPED_NOTE when `drain` does. */
  readonly tell: TellSender;
  /** Whether the platform delivers it again after the channel stopped: then `drain` tells nobody; never when unset. */
  readonly redelivered?: Redelivered | undefined;
  /** Whether its sender is told when a stop or `drain` drops it (ClaimDrop); always when unset. */
  readonly claimDrop?: ClaimDrop | undefined;
}

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

/** How long a stopping channel waits for its lanes (`drain`), and on what clock. */
export interface LaneStopOptions {
  /** 5 s by default: the shutdown's watchdog must still leave running turns their grace. */
  readonly withinMs?: number;
  /** How long the notes to the senders of what was dropped may take (2 s by default). */
  readonly tellWithinMs?: number;
  /** The system clock by default. */
  readonly clock?: Clock;
}

const DEFAULT_STOP_WITHIN_MS = 5000;
const DEFAULT_TELL_WITHIN_MS = 2000;

/**
 * What `enqueue` knows of a job besides its work: how its sender is told it was dropped (Telling;
 * nobody is told without `tell`), where its message stands (Positioned), and whether the sender's
 * stop spares it (`keptByStop`; `drain` never does).
 */
export type JobOptions = Partial<Telling> & Positioned & { readonly keptByStop?: boolean | undefined };

export interface HandOverLanesOptions {
  /** Messages one lane may hold (the running one included). */
  readonly maxWaiting: number;
  readonly logger: Logger;
  readonly stop?: LaneStopOptions | undefined;
  /** Several processes on one store: where a sender's stop is announced to the others. */
  readonly stopsElsewhere?: StopsElsewhere | undefined;
  /** How long, and for how many lanes, stops' marks are kept (lane-stop-marks.ts); the defaults by default. */
  readonly stopMarks?: StopMarkLimits | undefined;
}

/**
 * A job's state: cancelled (`aborted`), or out of reach of a cancel as it hands over (`taken`);
 * whether the sender's stop spares it (keptByStop), and how its sender is told it was dropped.
 */
interface JobSignal extends LaneSignal {
  aborted: boolean;
  taken: boolean;
  readonly keptByStop: boolean;
  readonly tell: TellSender | undefined;
  readonly redelivered: Redelivered | undefined;
  readonly claimDrop: ClaimDrop | undefined;
  readonly position: LanePosition | undefined;
}

function jobSignal(options: JobOptions): JobSignal {
  const signal: JobSignal = {
    aborted: false,
    taken: false,
    keptByStop: options.keptByStop ?? false,
    tell: options.tell,
    redelivered: options.redelivered,
    claimDrop: options.claimDrop,
    position: options.position,
    handingOver: () => {
      signal.taken = !signal.aborted;
      return signal.taken;
    },
  };
  return signal;
}

interface Lane {
  tail: Promise<void>;
  /** One per job not yet finished, the running one included: what a stop or `drain` aborts. */
  readonly jobs: Set<JobSignal>;
}

/** The tail of a lane with no job yet: nothing to wait for. */
const SETTLED: Promise<void> = Promise.resolve();

/** Per-sender ordered hand-over (see module comment). */
export class HandOverLanes {
  private readonly lanes = new Map<string, Lane>();
  private readonly marks: LaneStopMarks;

  constructor(private readonly options: HandOverLanesOptions) {
    this.marks = new LaneStopMarks(this.clock(), options.logger, options.stopMarks);
  }

  /**
   * Queue `job` behind the earlier jobs of lane `key`; resolves once it has run (or was
   * cancelled). Undefined (nothing queued) when the lane already holds `maxWaiting` jobs.
   */
  enqueue(key: string, job: LaneJob, options: JobOptions = {}): Promise<void> | undefined {
    if (this.late(key, options.position, options.keptByStop ?? false)) return this.droppedLate(options);
    const lane: Lane = this.lanes.get(key) ?? { tail: SETTLED, jobs: new Set() };
    if (lane.jobs.size >= this.options.maxWaiting) return undefined;
    // Each job has its own signal: a stop aborts the running job's, and a job queued after the
    // stop runs with one of its own.
    const signal = jobSignal(options);
    const idle = lane.jobs.size === 0;
    lane.jobs.add(signal);
    this.lanes.set(key, lane);
    // An idle lane (the usual case) runs the job at once: there is nothing for it to wait behind.
    const done = idle
      ? this.run(key, lane, signal, job)
      : lane.tail.then(() => this.run(key, lane, signal, job));
    lane.tail = done;
    return done;
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
      await entry.answer((await this.toTell(dropped)).length);
      return ANSWERED;
    }
    // A command sent before a stop already taken goes to the lane, which drops it unless kept.
    const atOnce =
      entry.kind === "at-once" ||
      (entry.kind === "command" &&
        !this.late(key, entry.position, keptByStop(entry.name)) &&
        (answeredAtOnce(entry.name) || !this.busy(key)));
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
    const handedOver = this.enqueue(key, job, { ...entry, keptByStop: kept });
    return handedOver ? { kind: "queued", handedOver } : FULL;
  }

  /** Run one job of lane `key` unless it was cancelled; the lane is dropped once it holds none. */
  private async run(key: string, lane: Lane, signal: JobSignal, job: LaneJob): Promise<void> {
    try {
      if (!signal.aborted) await job(signal);
    } catch (error) {
      this.options.logger.error({ err: error }, "message hand-over failed");
    } finally {
      lane.jobs.delete(signal);
      if (lane.jobs.size === 0 && this.lanes.get(key) === lane) this.lanes.delete(key);
    }
  }

  /** Whether lane `key` holds a job (running or waiting). */
  busy(key: string): boolean {
    return (this.lanes.get(key)?.jobs.size ?? 0) > 0;
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
    const told = await this.toTell(dropped);
    if (told.length > 0)
      await this.tellDropped(told.find((signal) => signal.tell !== undefined)?.tell, told.length);
  }

  /**
   * The sender's stop at `position`: abort the jobs of lane `key` sent before it but those kept by
   * a stop, and mark the lane stopped through it; those it aborted.
   */
  private stopLane(key: string, position: LanePosition | undefined): readonly JobSignal[] {
    if (position !== undefined) this.marks.mark(key, position);
    return this.abort(key, (signal) => !signal.keptByStop && sentBefore(signal.position, position));
  }

  /** Whether a job at `position` of lane `key`, not kept by a stop, was sent before a stop already taken. */
  private late(key: string, position: LanePosition | undefined, kept: boolean): boolean {
    return !kept && this.marks.late(key, position);
  }

  /** A job sent before a stop already taken: never run; its sender is told it was dropped (ClaimDrop). */
  private async droppedLate(options: JobOptions): Promise<void> {
    this.options.logger.info("hand-over dropped: its message was sent before a stop already taken");
    if (await this.claims(options.claimDrop)) await this.tellDropped(options.tell, 1);
  }

  /** Of the jobs a stop dropped, those whose sender is told of them (each one's drop claimed: ClaimDrop). */
  private async toTell(dropped: readonly JobSignal[]): Promise<readonly JobSignal[]> {
    const claimed = await Promise.all(dropped.map((signal) => this.claims(signal.claimDrop)));
    return dropped.filter((_, index) => claimed[index]);
  }

  /** Whether a dropped job's sender is told of it: `claimDrop`'s answer, yes without one or when it fails (logged). */
  private async claims(claimDrop: ClaimDrop | undefined): Promise<boolean> {
    try {
      return (await claimDrop?.()) ?? true;
    } catch (error) {
      this.options.logger.warn(
        { err: error },
        "could not tell whether a dropped message was handed over elsewhere",
      );
      return true;
    }
  }

  /** Tell a stopped sender that `count` of their messages were dropped; a failure is logged. */
  private async tellDropped(tell: TellSender | undefined, count: number): Promise<void> {
    try {
      await tell?.(droppedNote(count));
    } catch (error) {
      this.options.logger.warn({ err: error }, "a sender who stopped could not be told what was dropped");
    }
  }

  private clock(): Clock {
    return this.options.stop?.clock ?? systemClock;
  }

  /** Abort the jobs of lane `key` neither aborted nor handing over yet that `which` picks. */
  private abort(key: string, which: (signal: JobSignal) => boolean): readonly JobSignal[] {
    const lane = this.lanes.get(key);
    if (!lane) return [];
    const pending = [...lane.jobs].filter((signal) => !signal.aborted && !signal.taken && which(signal));
    for (const signal of pending) signal.aborted = true;
    return pending;
  }

  /**
   * Before the channel's first message: hear the stops other processes take (`stopsElsewhere`;
   * nothing with one process). Rejects when they cannot be heard, which a `drain` undoes.
   */
  async listen(): Promise<void> {
    await this.options.stopsElsewhere?.listen(this);
  }

  /** Resolves once every lane is empty, jobs queued meanwhile included. */
  async idle(): Promise<void> {
    while (this.lanes.size > 0) await Promise.all([...this.lanes.values()].map((lane) => lane.tail));
  }

  /**
   * A channel stopping (called once it receives no more): wait for the lanes to empty, at most the
   * stop options' time, then cancel every job left (never handed over) and tell each one's sender
   * so, unless the platform delivers it again or its drop's claim loses (handed over elsewhere),
   * for at most `tellWithinMs`; logs how many were dropped, how many of those the platform
   * redelivers, how many were handed over elsewhere, and how many senders were told. Then the
   * other processes' stops are no longer heard (also after a failed `listen`).
   */
  async drain(): Promise<void> {
    try {
      await this.dropLeft();
    } finally {
      await this.options.stopsElsewhere?.close();
    }
  }

  /** `drain`'s part on the lanes: wait for them, then drop what is left and tell its senders. */
  private async dropLeft(): Promise<void> {
    const stop = this.options.stop;
    const outcome = await this.within(this.idle(), stop?.withinMs ?? DEFAULT_STOP_WITHIN_MS);
    if (outcome === "done") return;
    const dropped = [...this.lanes.keys()].flatMap((key) => this.abort(key, () => true));
    // Only what the platform never delivers again is claimed: a claim records its key for good.
    const notRedelivered = dropped.filter((signal) => signal.redelivered?.() !== true);
    const telling = notRedelivered.filter((signal) => signal.tell !== undefined);
    let told = 0;
    let elsewhere = 0;
    const tells = telling.map(async (signal) => {
      if (!(await this.claims(signal.claimDrop))) {
        elsewhere += 1;
        return;
      }
      try {
        await signal.tell?.(STOPPED_NOTE);
        told += 1;
      } catch (error) {
        this.options.logger.warn({ err: error }, "a dropped message's sender could not be told");
      }
    });
    const tellOutcome = await this.within(Promise.all(tells), stop?.tellWithinMs ?? DEFAULT_TELL_WITHIN_MS);
    this.options.logger.warn(
      {
        dropped: dropped.length,
        redelivered: dropped.length - notRedelivered.length,
        told,
        allTold: tellOutcome === "done" && told + elsewhere === telling.length,
        handedOverElsewhere: elsewhere,
      },
      "stopped with messages still being read: not handed over, their senders told to send them again unless redelivered",
    );
  }

  /** Whether `work` settles within `ms` on the stop options' clock ("late" otherwise). */
  private async within(work: Promise<unknown>, ms: number): Promise<"done" | "late"> {
    const clock = this.clock();
    let handle: unknown;
    const late = new Promise<"late">((resolve) => {
      handle = clock.setTimer(() => resolve("late"), ms);
    });
    const outcome = await Promise.race([work.then(() => "done" as const), late]);
    clock.clearTimer(handle);
    return outcome;
  }
}
