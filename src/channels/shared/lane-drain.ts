/**
 * Lane drain: what a stopping channel does with the messages still in its hand-over lanes
 * (hand-over-lanes.ts `drain`), kept apart from the routing as it runs once, at shutdown, on
 * bounds and a clock of its own (LaneStopOptions). The lanes get a bounded time to empty; then
 * what is left — never handed over — is cancelled. Where the platform took a message as delivered
 * already (Slack acknowledged, a polled Telegram update confirmed, a webhook update answered at its
 * deadline), no other process gets it, so its sender is told in its conversation that it was not
 * taken and should be sent again (STOPPED_NOTE), for a bounded time too, so a slow platform cannot
 * hold the shutdown, and once its drop is claimed (lane-drop-notes.ts): one handed over elsewhere
 * (a Slack post's twin) is dropped silently, or its resend would be a second turn. Where the
 * platform will deliver it again (a webhook update not answered yet: Redelivered), its sender is
 * not told: their resend would come besides the redelivery, a second turn.
 */
import type { Logger } from "pino";
import type { Clock } from "../../core/clock.js";
import { settlesWithin } from "../../core/settles-within.js";
import type { DropNotes } from "./lane-drop-notes.js";
import type { LaneJobs } from "./lane-jobs.js";

const DEFAULT_STOP_WITHIN_MS = 5000;
const DEFAULT_TELL_WITHIN_MS = 2000;

/** How long a stopping channel waits for its lanes (`drain`), and on what clock. */
export interface LaneStopOptions {
  /** 5 s by default: the shutdown's watchdog must still leave running turns their grace. */
  readonly withinMs?: number;
  /** How long the notes to the senders of what was dropped may take (2 s by default). */
  readonly tellWithinMs?: number;
  /** The system clock by default. */
  readonly clock?: Clock;
}

/** What a drain works on: the lanes' jobs, the notes to their senders, and its bounds. */
export interface LaneDrainParts {
  readonly jobs: LaneJobs;
  readonly notes: DropNotes;
  /** What the sender of each dropped message is told (STOPPED_NOTE). */
  readonly note: string;
  readonly stop: LaneStopOptions | undefined;
  readonly logger: Logger;
}

/**
 * Wait for the lanes to empty, at most `withinMs`, then cancel every job left and tell each one's
 * sender `note`, unless the platform delivers it again or its drop's claim loses, for at most
 * `tellWithinMs`; logs how many were dropped, how many of those the platform redelivers, how many
 * were handed over elsewhere, and how many senders were told. Nothing is logged when the lanes
 * empty in time.
 */
export async function drainLanes({ jobs, notes, note, stop, logger }: LaneDrainParts): Promise<void> {
  const clock = stop?.clock;
  if (await settlesWithin(jobs.idle(), stop?.withinMs ?? DEFAULT_STOP_WITHIN_MS, clock)) return;
  const dropped = jobs.abortAll();
  // Only what the platform never delivers again is claimed: a claim records its key for good.
  const notRedelivered = dropped.filter((job) => job.redelivered?.() !== true);
  const { tally, done } = notes.tellEach(notRedelivered, note);
  const notesSettled = await settlesWithin(done, stop?.tellWithinMs ?? DEFAULT_TELL_WITHIN_MS, clock);
  logger.warn(
    {
      dropped: dropped.length,
      redelivered: dropped.length - notRedelivered.length,
      told: tally.told,
      allTold: notesSettled && tally.told + tally.handedOverElsewhere === tally.telling,
      handedOverElsewhere: tally.handedOverElsewhere,
    },
    "stopped with messages still being read: not handed over, their senders told to send them again unless redelivered",
  );
}
