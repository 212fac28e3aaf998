/**
 * TurnExecutor: one turn of a session, from its start to its end in the record. A turn starts
 * from a message (queued, retried or never queued), or resumes from its parked state in the store
 * — how far its history got says how it continues. Its events are driven into the thread, and its
 * end is written with the session's next write (see `finish`), so a message that follows soon
 * starts its turn in the same write as the last one's end. The pump (turn-scheduler.ts) decides
 * which turn runs when; this runs it.
 */
import type { Logger } from "pino";
import type { ParkedTurn } from "../approvals/parked-turn.js";
import { isoTime } from "../core/iso-time.js";
import { type ConversationExecutionRequest, newTurnId } from "../core/request.js";
import { type PlatformUser, replyingTo, replyingToNone, type ThreadTarget } from "../core/thread-target.js";
import type { ThreadOutput } from "../core/thread-output.js";
import { turnLogger } from "../logging/logger.js";
import type { LiveSession } from "./live-session.js";
import { buildTurnRequest, type RequestSettings, rebuildTurnRequest } from "./request-builder.js";
import type { QueuedMessage, TargetExtra } from "./session-record.js";
import { withTurnFinished, withTurnStarted } from "./turn-record-changes.js";
import { recoveryOf } from "./turn-recovery.js";
import { driveTurn, type TurnOutcome, TurnStartNotSaved } from "./turn-runner.js";
import { scrubSecrets } from "../logging/redact.js";
import { lastTurnOrigin } from "./wake-turns.js";

export interface TurnExecutorOptions {
  readonly outputFor: (target: ThreadTarget) => ThreadOutput | undefined;
  /**
   * With several processes: whether this process holds the session. A turn of a session it lost
   * (its lease lapsed; another process continues it) ends without showing more. Default: always.
   */
  readonly holdsSession?: ((sessionId: string) => boolean) | undefined;
  readonly settings: RequestSettings;
  readonly logger: Logger;
  readonly now: () => Date;
  /** Give the session a fresh engine (drops steering an ended turn never took). */
  readonly rebind: (live: LiveSession) => void;
  /**
   * Told how each turn ended, with the turn's request metadata: its record change is made by then,
   * and saved with the session's next write.
   */
  readonly onTurnEnd?: (end: TurnEnd) => void;
}

/** A message a pump starts as its first turn without queueing it (see TurnScheduler.startNow). */
export interface FirstTurn {
  readonly message: QueuedMessage;
  /** Told of the turn's record write as soon as it is made. */
  saved(write: Promise<unknown>): void;
  /** Told when the turn could not be started. */
  failed(error: unknown): void;
}

/** How one turn ended, for listeners (e.g. a scheduled task counting failed runs). */
export interface TurnEnd {
  readonly sessionId: string;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly status: TurnOutcome["status"];
}

/** Starts, resumes, drives and ends the turns of this process's sessions (under their lock). */
export class TurnExecutor {
  constructor(private readonly options: TurnExecutorOptions) {}

  /**
   * Run `message` as the session's turn; `first` (a message never queued) is told of the turn's
   * record write as soon as it is made.
   */
  start(live: LiveSession, message: QueuedMessage, first?: FirstTurn): Promise<void> {
    return this.startTurn(live, message, "run", first);
  }

  /**
   * Re-run the session's last turn as `user` — its requester (retry-requester.ts) — on the channel
   * content it ran on, if any, and as the agent's own note when that started it.
   */
  retry(live: LiveSession, user: PlatformUser): Promise<void> {
    const { channelContent, agentNote } = lastTurnOrigin(live.record, live.history);
    const message: QueuedMessage = {
      user,
      text: "",
      files: [],
      sentAt: this.stamp(),
      ...(channelContent ? { channelContent } : {}),
      ...(agentNote ? { agentNote: true } : {}),
    };
    return this.startTurn(live, message, "retry");
  }

  /**
   * Resume a turn from its parked state in the store (after a restart, an eviction, a decision
   * that found no turn waiting, or in another process than the one it started in): how it
   * continues follows from how far its history got. Runs under the session's lock; `held` says
   * whether it still holds it (a lost lease: the turn is left for the next holder).
   */
  async resumeParked(live: LiveSession, parked: ParkedTurn, held: () => boolean = () => true): Promise<void> {
    const recovery = recoveryOf(parked, live.history, live.historyStart);
    if (recovery === "done") {
      // The turn had finished its work when the process stopped: nothing to continue.
      this.finish(live, { status: "completed", usage: undefined, finalText: "" });
      return;
    }
    if (recovery === "answer")
      // The model call was cut off: mark it failed (markers are never sent to the model), retry it.
      await live.persistence.append([
        {
          role: "assistant",
          content: null,
          meta: { at: this.stamp(), error: "The service stopped before the model answered." },
        },
      ]);
    let request: ConversationExecutionRequest;
    try {
      request = rebuildTurnRequest(parked.request, live);
    } catch (error) {
      this.options.logger.error({ err: error, sessionId: live.id }, "stored turn is unreadable; dropping it");
      this.finish(live, { status: "error", usage: undefined, finalText: "" });
      return;
    }
    if (!held()) return;
    await this.drive(
      live,
      request,
      recovery === "rerun" ? "run" : recovery === "resume" ? "resume" : "retry",
      parked.targetExtra,
    );
  }

  /**
   * Start `message` as a turn: the record marks it in progress (and takes it off the queue; its
   * dedupe keys move to the marker), and the engine runs it. The model call does not wait for that
   * write; the turn shows nothing and starts no tool before it is saved (see driveTurn and
   * LiveSession's tool journal), and should the write fail, the turn is stopped and this throws.
   * `first` (a message never queued) is told of the record write as soon as it is made.
   */
  private startTurn(
    live: LiveSession,
    message: QueuedMessage,
    how: "run" | "retry",
    first?: FirstTurn,
  ): Promise<void> {
    let saved: Promise<unknown>;
    let request: ConversationExecutionRequest;
    try {
      const turnId = newTurnId();
      request = buildTurnRequest({
        record: live.record,
        message,
        history: live.history,
        settings: this.options.settings,
        turnId,
      });
      const start = {
        message,
        how,
        request,
        startedAt: this.stamp(),
        historyLength: live.historyCount,
      };
      saved = live.update((record) => withTurnStarted(record, start));
    } catch (error) {
      first?.failed(error);
      return Promise.reject(error);
    }
    first?.saved(saved);
    return this.drive(live, request, how, message.targetExtra, saved);
  }

  /** Run a turn's events into its thread; `saved` is the write of its start, if still under way. */
  private async drive(
    live: LiveSession,
    request: ConversationExecutionRequest,
    how: "run" | "resume" | "retry",
    replyTo: TargetExtra | undefined,
    saved?: Promise<unknown>,
  ) {
    const { holdsSession } = this.options;
    const logger = turnLogger(this.options.logger, { sessionId: live.id, turnId: request.turnId });
    live.activeTurn = {
      turnId: request.turnId,
      requester: {
        platform: live.record.target.platform,
        userId: request.requester.userId,
        name: request.requester.displayName,
      },
      ...(replyTo === undefined ? {} : { replyTo }),
      ...(request.metadata.scheduledRun !== undefined || request.metadata.channelContent !== undefined
        ? { woken: true as const }
        : {}),
    };
    // A turn no message triggered (a wake-up, a scheduled run) replies to none, like its cards
    // (engine-context.ts): its answer goes to the thread itself, never as a reply to the session's
    // first message — in a group maybe another member's.
    const target = replyTo === undefined ? replyingToNone(live.record.target) : live.record.target;
    let outcome: TurnOutcome = { status: "error", usage: undefined, finalText: "" };
    try {
      const events =
        how === "run"
          ? live.engine.run(request)
          : how === "retry"
            ? live.engine.retry(request)
            : live.engine.resume(request);
      outcome = await driveTurn({
        events,
        output: this.options.outputFor(target),
        info: { sessionId: live.id, turnId: request.turnId, ...(replyTo === undefined ? {} : { replyTo }) },
        logger,
        saved,
        quiet: holdsSession && (() => !holdsSession(live.id)),
      });
    } catch (error) {
      // Nothing of the turn was shown: its start's failure is the pump's, as if it never began.
      if (error instanceof TurnStartNotSaved) throw error.cause;
      logger.error({ err: error }, "turn failed");
      if (this.options.holdsSession?.(live.id) !== false)
        // The notice replies to the turn's trigger (to none without one), like its cards.
        await this.notify(
          live,
          `The turn failed: ${error instanceof Error ? error.message : String(error)}`,
          replyingTo(live.record.target, replyTo),
        );
    } finally {
      live.activeTurn = undefined;
    }
    if (live.untakenSteering.length > 0 || live.discardSteering) {
      live.discardSteering = false;
      this.options.rebind(live);
      await live.update((r) => ({ ...r, queue: r.queue.map(({ steered: _, ...m }) => m) }));
    }
    this.finish(live, outcome);
    try {
      this.options.onTurnEnd?.({ sessionId: live.id, metadata: request.metadata, status: outcome.status });
    } catch (error) {
      logger.warn({ err: error }, "a turn-end listener failed");
    }
  }

  /**
   * End the turn in the record: in memory now, saved with the session's next write — the next
   * turn's start, usually, so ending one turn and starting the next is one write — or, once the
   * pump has ended, soon after (TurnEndSaves; several processes: before the lease is let go). Until
   * then the store still shows the turn in progress, which is what a crash right after its last
   * history append leaves too: recovery finds it done.
   */
  private finish(live: LiveSession, outcome: TurnOutcome): void {
    live.defer((record) => withTurnFinished(record, outcome.usage));
  }

  /**
   * Post `text` into the session's thread at `target` (replyingTo the message it concerns, never
   * by default to the session's first one), scrubbed of token-shaped text (it may quote a
   * failure); a failure to post is only logged.
   */
  async notify(live: LiveSession, text: string, target: ThreadTarget): Promise<void> {
    try {
      await this.options.outputFor(target)?.postText(scrubSecrets(text));
    } catch (error) {
      this.options.logger.warn({ err: error, sessionId: live.id }, "posting a notice failed");
    }
  }

  private stamp(): string {
    return isoTime(this.options.now());
  }
}
