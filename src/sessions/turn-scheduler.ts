/**
 * TurnScheduler: runs each session's turns one at a time, in the background. A session's pump
 * holds the session lock while it first resumes a turn left in progress (restart, eviction, a
 * decision that arrived with no turn waiting), then starts queued messages as turns until the
 * queue is empty. Pumps are tracked so shutdown can wait for them, interrupt them, or leave turns
 * parked at a person (their state is durable) — never leaving a running tool call orphaned. A
 * turn's end is written with the session's next write (see `finish`), so a message that follows
 * soon starts its turn in the same write as the last one's end.
 */
import type { Logger } from "pino";
import type { ParkedTurn } from "../approvals/parked-turn.js";
import { type ConversationExecutionRequest, newTurnId } from "../core/request.js";
import type { PlatformUser, ThreadTarget } from "../core/thread-target.js";
import type { ThreadOutput } from "../core/thread-output.js";
import { turnLogger } from "../logging/logger.js";
import type { LiveSession } from "./live-session.js";
import { type DrainReport, drainPumps } from "./pump-drain.js";
import { buildTurnRequest, promptOf, type RequestSettings, rebuildTurnRequest } from "./request-builder.js";
import type { SessionLease, SessionLock } from "./session-lock.js";
import type { QueuedMessage, TargetExtra } from "./session-record.js";
import type { TurnEndSaves } from "./turn-end-saves.js";
import type { TurnGate } from "./turn-gate.js";
import { withTurnFinished, withTurnStarted } from "./turn-record-changes.js";
import { recoveryOf } from "./turn-recovery.js";
import { driveTurn, type TurnOutcome, TurnStartNotSaved } from "./turn-runner.js";
import { retryProvenance } from "./wake-turns.js";

export interface TurnSchedulerOptions {
  readonly lock: SessionLock;
  readonly outputFor: (target: ThreadTarget) => ThreadOutput | undefined;
  readonly settings: RequestSettings;
  readonly logger: Logger;
  readonly now: () => Date;
  /** Called when a pump ends (the session may now be evictable). */
  readonly onIdle: (live: LiveSession) => void;
  /** Give the session a fresh engine (drops steering an ended turn never took). */
  readonly rebind: (live: LiveSession) => void;
  /**
   * Told how each turn ended, with the turn's request metadata: its record change is made by then,
   * and saved with the session's next write.
   */
  readonly onTurnEnd?: (end: TurnEnd) => void;
  /** Several processes on one store: who takes a session's pump, and input other processes queued. */
  readonly gate?: TurnGate;
  /** Saves a turn's end its session's next write did not carry (one process). */
  readonly endSaves: TurnEndSaves;
}

/** How a pump begins: with a message as its first turn, or under a lease already taken. */
type PumpStart = FirstTurn | { readonly lease: SessionLease };

/** A message a pump starts as its first turn without queueing it (see `startNow`). */
interface FirstTurn {
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

/** Background turn execution for all sessions of this process. */
export class TurnScheduler {
  private readonly pumps = new Map<LiveSession, Promise<void>>();
  private stopping = false;

  constructor(private readonly options: TurnSchedulerOptions) {}

  /** Whether shutdown has begun (no new turns start). */
  get draining(): boolean {
    return this.stopping;
  }

  /**
   * Queue a message (a wake-up, a command's turn) in the session and make sure its pump runs;
   * "queued" when a turn was already under way. The session stays in memory meanwhile.
   */
  async submit(live: LiveSession, message: QueuedMessage): Promise<"started" | "queued"> {
    if (this.options.gate) {
      await this.offer(live, message, false);
      return "queued";
    }
    live.holds++;
    try {
      const wasBusy = await live.enqueue(message);
      this.schedule(live);
      return wasBusy ? "queued" : "started";
    } finally {
      live.holds--;
    }
  }

  /** Queue a message through the gate (several processes); a session this process took gets its pump. */
  async offer(live: LiveSession, message: QueuedMessage, steer: boolean): Promise<"queued" | "duplicate"> {
    const offered = await this.options.gate?.offer(live, message, steer);
    if (offered === "duplicate") return "duplicate";
    if (offered !== undefined && offered !== "queued") this.schedule(live, { lease: offered });
    return "queued";
  }

  /**
   * Start `message` as the session's turn at once when the session is idle — no pump, nothing
   * queued or in progress, its lock free — so the message's one write is the turn's record: it
   * never passes through the queue, and its dedupe keys are held by the turn's marker until the
   * turn ends (then they are recorded as seen). Resolves once that record is saved, with false
   * (and nothing done) when the session was not idle. The turn runs on in the background.
   */
  startNow(live: LiveSession, message: QueuedMessage): Promise<boolean> {
    const { record } = live;
    const idle =
      !this.options.gate &&
      !this.stopping &&
      !live.retired &&
      !live.busy &&
      live.retryBy === undefined &&
      record.pendingTurn === undefined &&
      record.queue.length === 0 &&
      !this.options.lock.isHeld(live.id);
    if (!idle) return Promise.resolve(false);
    return new Promise<boolean>((resolve, reject) =>
      this.schedule(live, {
        message,
        saved: (write) => write.then(() => resolve(true), reject),
        failed: reject,
      }),
    );
  }

  /**
   * Make sure the session's pump runs; it picks up any pending work. Never waits for a turn. With
   * `start`, the pump begins with that message as its turn, or under a lease already taken.
   */
  schedule(live: LiveSession, start?: PumpStart): void {
    if (start && "lease" in start && live.pump && !this.stopping && !live.retired) {
      // The pump is ending (it let the session go just before this process took it again).
      void live.pump.finally(() => this.schedule(live, start));
      return;
    }
    if (live.pump || this.stopping || live.retired) {
      if (start && "lease" in start) start.lease.release();
      else start?.failed(new Error("the session could not start the turn"));
      return;
    }
    const pump = this.pump(live, start)
      .catch((error) => this.options.logger.error({ err: error, sessionId: live.id }, "session pump failed"))
      .finally(() => {
        live.pump = undefined;
        this.pumps.delete(live);
        this.options.onIdle(live);
      });
    live.pump = pump;
    this.pumps.set(live, pump);
  }

  /**
   * Send a message into the running turn; false when no turn is running to take it, or when the
   * message is not from the person the turn runs as (its tools act with that person's access and
   * channel memberships, so another person's words become a follow-up turn of their own). The
   * message is also queued (flagged as steering) until the engine takes it into the history, so it
   * survives a restart, and becomes a follow-up turn if the turn ends without taking it.
   */
  async steer(live: LiveSession, message: QueuedMessage): Promise<boolean> {
    if (!live.activeTurn || !live.engine.isRunning) return false;
    if (live.activeTurn.requester.userId !== message.user.id) return false;
    const saved = live.update((r) => ({ ...r, queue: [...r.queue, { ...message, steered: true }] }));
    live.engine.steer(promptOf(message), message.attachments ?? []);
    await saved;
    return true;
  }

  /** Resolves when every pump running now has ended and every turn end is saved (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.pumps.size > 0) await Promise.allSettled([...this.pumps.values()]);
    await this.options.endSaves.all();
  }

  /**
   * Stop starting turns, then let the running ones end, park or be interrupted (see drainPumps).
   */
  async drain(
    graceMs: number,
    isParked: (live: LiveSession) => boolean,
    nextPark: () => Promise<void>,
  ): Promise<DrainReport> {
    this.stopping = true;
    const report = await drainPumps(this.pumps, graceMs, isParked, nextPark);
    await this.options.endSaves.all();
    return report;
  }

  private async pump(live: LiveSession, start?: PumpStart): Promise<void> {
    const { gate } = this.options;
    const first = start && "message" in start ? start : undefined;
    let lease: SessionLease | undefined = start && "lease" in start ? start.lease : undefined;
    try {
      lease ??= gate ? await gate.enter(live) : await this.options.lock.acquire(live.id);
    } catch (error) {
      first?.failed(error);
      throw error;
    }
    if (!lease) return;
    try {
      await this.run(live, first);
    } finally {
      // The last turn's end is still only in memory (see `finish`). Another process may take the
      // session once the lease is let go, so there it is saved first; this process is the only
      // other taker, on this same session in memory, so here it may wait for the next write.
      if (gate) await live.flush().finally(() => lease.release());
      else {
        lease.release();
        this.options.endSaves.later(live);
      }
    }
  }

  /** The pump's work under the lease: a parked turn, a retry or the queued messages, in turn. */
  private async run(live: LiveSession, first: FirstTurn | undefined): Promise<void> {
    const { gate } = this.options;
    if (first) await this.startTurn(live, first.message, "run", first);
    while (!this.stopping && !live.retired) {
      await gate?.collect(live);
      const record = live.record;
      const retry = live.retryBy;
      live.retryBy = undefined;
      const parked = live.parkedTurn();
      if (parked) await this.resumeParked(live, parked);
      else if (retry) {
        const channelContent = retryProvenance(live.record, live.history);
        const message = { user: retry, text: "", files: [], sentAt: this.stamp() };
        await this.startTurn(live, channelContent ? { ...message, channelContent } : message, "retry");
      } else if (record.queue[0]) await this.startTurn(live, record.queue[0], "run");
      else return;
    }
  }

  /** Re-run the session's last turn after a provider error; false when a turn is running. */
  retry(live: LiveSession, user: PlatformUser): boolean {
    if (live.busy) return false;
    live.retryBy = user;
    this.schedule(live);
    return true;
  }

  private stamp(): string {
    return this.options.now().toISOString();
  }

  /**
   * Start `message` as a turn: the record marks it in progress (and takes it off the queue; its
   * dedupe keys move to the marker), and the engine runs it. The model call does not wait for that
   * write; the turn shows nothing and starts no tool before it is saved (see driveTurn and
   * LiveSession's tool journal), and should the write fail, the turn is stopped and this throws.
   * `first` (a message never queued) is told of the record write as soon as it is made.
   */
  private async startTurn(
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
        historyLength: live.history.length,
      };
      saved = live.update((record) => withTurnStarted(record, start));
    } catch (error) {
      first?.failed(error);
      throw error;
    }
    first?.saved(saved);
    await this.drive(live, request, how, message.targetExtra, saved);
  }

  /**
   * Resume a turn from its parked state in the store (after a restart, an eviction, a decision
   * that found no turn waiting, or in another process than the one it started in): how it
   * continues follows from how far its history got. Runs under the session's lock.
   */
  async resumeParked(live: LiveSession, parked: ParkedTurn): Promise<void> {
    const recovery = recoveryOf(parked, live.history);
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
      request = rebuildTurnRequest(parked.request, live.history);
    } catch (error) {
      this.options.logger.error({ err: error, sessionId: live.id }, "stored turn is unreadable; dropping it");
      this.finish(live, { status: "error", usage: undefined, finalText: "" });
      return;
    }
    await this.drive(
      live,
      request,
      recovery === "rerun" ? "run" : recovery === "resume" ? "resume" : "retry",
      parked.targetExtra,
    );
  }

  /** Run a turn's events into its thread; `saved` is the write of its start, if still under way. */
  private async drive(
    live: LiveSession,
    request: ConversationExecutionRequest,
    how: "run" | "resume" | "retry",
    replyTo: TargetExtra | undefined,
    saved?: Promise<unknown>,
  ) {
    const logger = turnLogger(this.options.logger, { sessionId: live.id, turnId: request.turnId });
    live.activeTurn = {
      turnId: request.turnId,
      requester: {
        platform: live.record.target.platform,
        userId: request.requester.userId,
        name: request.requester.displayName,
      },
      ...(replyTo === undefined ? {} : { replyTo }),
    };
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
        output: this.options.outputFor(live.record.target),
        info: { sessionId: live.id, turnId: request.turnId, ...(replyTo === undefined ? {} : { replyTo }) },
        logger,
        saved,
      });
    } catch (error) {
      // Nothing of the turn was shown: its start's failure is the pump's, as if it never began.
      if (error instanceof TurnStartNotSaved) throw error.cause;
      logger.error({ err: error }, "turn failed");
      await this.notify(live, `The turn failed: ${error instanceof Error ? error.message : String(error)}`);
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
    live.defer((record) => withTurnFinished(record, outcome.usage, live.facts.downloadedFiles));
  }

  private async notify(live: LiveSession, text: string): Promise<void> {
    try {
      await this.options.outputFor(live.record.target)?.postText(text);
    } catch (error) {
      this.options.logger.warn({ err: error, sessionId: live.id }, "posting a notice failed");
    }
  }
}
