/**
 * SlackLanes: Slack's side of the hand-over lanes (channels/shared/hand-over-lanes.ts), where a
 * message's files are downloaded and read once slack-inbound.ts has checked its access, so one
 * person's slow file holds only their own later messages in the thread. A lane is one sender in
 * one thread. A command typed as a message (no files) is handed over at once, unless its sender's
 * lane is busy and it may change what their earlier message meets ("new", "mode …"): then it
 * waits there (answeredAtOnce); one that cannot run (a usage text) changes nothing, so it is
 * handed over at once.
 * A sender's stop cancels their lane, and they are told what it dropped: their "stop" typed in the
 * thread (then handed over, which stops the turn too), and their Stop button on a running answer or
 * `/coworker stop` for the thread (`stop`, which slack-interactions.ts calls before it stops the
 * turn, awaiting it after). The lane is cancelled as the stop is routed, before anything is
 * awaited; the turn is stopped right after, never behind the drops' claims or the note (a post
 * Slack may take a minute and more to answer). In every process, when several share one store
 * (lane-stop-broadcast.ts), once per post: a dropped post is claimed in the session layer's record
 * of deliveries under its channel + ts first (hand-over-lanes.ts ClaimDrop), so its twin read in
 * another process, or a redelivery of it handed over elsewhere, is dropped without a second or a
 * false note.
 * There a message's place in its sender's stream (LanePosition) is its ts: unique and increasing
 * within a channel, which every message of one lane shares, so a stop in one process cancels in
 * another only what was sent before it (positionOf). An edit's app_mention (a mention added to a
 * reply, heard for EDIT_WINDOW_MS) carries the ts of the message edited, not when the edit was
 * made, so it has no position: a stop's mark never drops it as sent before the stop (it may well
 * be a request made after it), while any stop still cancels it as it is read (the stop wins when
 * the order is not known). The edit's own `edited.ts` is no position either: a time, not the
 * channel's sequence, so it is not ordered against a stop in the same second — nor is a button
 * press's `action_ts`, and a slash command has none: their stop has no position, and cancels all
 * the sender's lane holds.
 * `drain` gives the lanes a bounded time, then drops what is left: Slack was acknowledged long
 * before, so no other process gets it, and each dropped message's sender is told in its thread to
 * send it again (hand-over-lanes.ts STOPPED_NOTE).
 */
import type { Logger } from "pino";
import type { ParsedCommand } from "../../core/text-commands.js";
import type { ThreadTarget } from "../../core/thread-target.js";
import {
  type ClaimDrop,
  droppedNote,
  HandOverLanes,
  LANE_MAX_WAITING,
  type LaneEntry,
  type LaneJob,
  type LaneStopOptions,
  NOT_CANCELLED,
  type Routed,
  type StopsElsewhere,
} from "../shared/hand-over-lanes.js";
import type { LanePosition } from "../shared/lane-stop-marks.js";
import type { MessageEvent } from "./slack-events.js";

/** What Slack's lanes need from the channel: its logger, the lanes' limits and how to post. */
export interface SlackLanesDeps {
  readonly logger: Logger;
  /** How long `drain` waits for messages whose files are still being read. */
  readonly laneStop?: LaneStopOptions | undefined;
  /** Several processes on one store: a sender's stop cancels their lane in every one of them. */
  readonly stopsElsewhere?: StopsElsewhere | undefined;
  /** Post `text` in the target's thread; rejects when Slack refuses it. */
  readonly post: (target: ThreadTarget, text: string) => Promise<void>;
  /** Tell the person `lines` in the target's thread, best effort (a failure is logged). */
  readonly tell: (target: ThreadTarget, lines: readonly string[]) => Promise<void>;
}

/** A message whose access was checked, for its sender's lane. */
export interface LaneMessage {
  readonly event: MessageEvent;
  readonly target: ThreadTarget;
  readonly author: string;
  /** The command it types, if any (never one for a message with files). */
  readonly command: ParsedCommand | undefined;
  /** Reads its files and hands it to the session layer, unless its lane was cancelled meanwhile. */
  readonly handOver: LaneJob;
  /** Claims the telling of its drop, under the id every delivery of its post shares. */
  readonly claimDrop: ClaimDrop;
}

/** Whether `command` is the sender's typed "stop", which cancels their lane and passes their thread's order. */
export function isStop(command: ParsedCommand | undefined): boolean {
  return command?.ok === true && command.command.name === "stop";
}

/**
 * Slack's side of the hand-over lanes: each sender's messages, commands and stops in a thread go
 * through their lane in the order sent (see the module header).
 */
export class SlackLanes {
  private readonly lanes: HandOverLanes;

  constructor(private readonly deps: SlackLanesDeps) {
    this.lanes = new HandOverLanes({
      maxWaiting: LANE_MAX_WAITING,
      logger: deps.logger,
      stop: deps.laneStop,
      stopsElsewhere: deps.stopsElsewhere,
    });
  }

  /** Before the first event: hear the stops other processes take (several processes on one store). */
  async listen(): Promise<void> {
    await this.lanes.listen();
  }

  /**
   * The channel stopping: messages still being read get a bounded time, then are dropped, each
   * one's sender told in its thread to send it again; then other processes' stops are no longer heard.
   */
  async drain(): Promise<void> {
    await this.lanes.drain();
  }

  /** Route `message` through its sender's lane (see module comment); "full" when the lane did not take it. */
  route(message: LaneMessage): Promise<Routed> {
    if (isStop(message.command)) return this.typedStop(message);
    return this.lanes.route(laneKey(message.target, message.author), this.entryOf(message));
  }

  /**
   * The sender's "stop" typed in the thread: cancel their lane, then hand the stop over at once —
   * it stops the turn — while what was dropped is claimed and they are told of it.
   */
  private async typedStop({ event, target, author, handOver }: LaneMessage): Promise<Routed> {
    const [routed] = await Promise.all([
      this.lanes.route(laneKey(target, author), {
        kind: "stop",
        position: event.edited ? undefined : positionOf(event.ts),
        answer: (dropped) => this.tellDropped(target, dropped),
      }),
      handOver(NOT_CANCELLED),
    ]);
    return routed;
  }

  /**
   * The stop of `author` from a button or the slash command in the target's thread: cancel all
   * their lane there holds (see module comment) and tell them what it dropped. A target without a
   * thread has no lane (every message's target names its thread).
   */
  async stop(target: ThreadTarget, author: string): Promise<void> {
    if (target.thread === undefined) return;
    await this.lanes.route(laneKey(target, author), {
      kind: "stop",
      position: undefined,
      answer: (dropped) => this.tellDropped(target, dropped),
    });
  }

  /**
   * The message as its sender's lane routes it, a stop aside (typedStop): a command, or a message,
   * its files read in the lane. What waits in the lane is told STOPPED_NOTE in its thread
   * if a stopping channel drops it, a failed post rejecting (`drain` counts it not told).
   */
  private entryOf(message: LaneMessage): LaneEntry {
    const { event, target, command, handOver, claimDrop } = message;
    const tell = (text: string) => this.deps.post(target, text);
    const position = event.edited ? undefined : positionOf(event.ts);
    if (!command) return { kind: "message", handOver, tell, claimDrop, position };
    if (!command.ok) return { kind: "at-once", handOver };
    return { kind: "command", name: command.command.name, handOver, tell, claimDrop, position };
  }

  /** Tell a sender who stopped how many of their messages it dropped, if any. */
  private async tellDropped(target: ThreadTarget, dropped: number): Promise<void> {
    if (dropped > 0) await this.deps.tell(target, [droppedNote(dropped)]);
  }
}

/** The lane of `author` in the target's thread. */
function laneKey(target: ThreadTarget, author: string): string {
  return `${target.channel}:${target.thread}:${author}`;
}

/**
 * A message's ts ("1700000000.000100": seconds, then six digits of a per-channel sequence) as a
 * LanePosition: the whole of it in millionths, a safe integer for any ts of the next 280 years;
 * unknown for one not so written.
 */
function positionOf(ts: string): LanePosition | undefined {
  const parts = /^(\d{1,12})\.(\d{6})$/.exec(ts);
  if (!parts) return undefined;
  const position = Number(parts[1]) * 1_000_000 + Number(parts[2]);
  return Number.isSafeInteger(position) ? position : undefined;
}
