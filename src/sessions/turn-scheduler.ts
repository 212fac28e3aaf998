/**
 * TurnScheduler: runs each session's turns one at a time, in the background. A session's pump
 * holds the session lock while it first resumes a turn left in progress (restart, eviction, a
 * decision that arrived with no turn waiting), then starts queued messages as turns until the
 * queue is empty; each turn itself is run by TurnExecutor (turn-executor.ts). A turn a person
 * starts (a message, a wake-up as them, a retry) runs in one of their turn slots
 * (person-turn-slots.ts), waiting for one when they already run as many as they may. Pumps are tracked so
 * shutdown can wait for them, interrupt them, or leave turns parked at a person (their state is
 * durable) — never leaving a running tool call orphaned.
 */
import type { PlatformUser } from "../core/thread-target.js";
import type { LiveSession } from "./live-session.js";
import { type DrainReport, drainPumps } from "./pump-drain.js";
import { promptOf } from "./request-builder.js";
import type { SessionLease, SessionLock } from "./session-lock.js";
import type { QueuedMessage } from "./session-record.js";
import { type FirstTurn, TurnExecutor, type TurnExecutorOptions } from "./turn-executor.js";
import type { TurnEndSaves } from "./turn-end-saves.js";
import type { GateInput, TurnGate } from "./turn-gate.js";
import type { PersonTurnSlots } from "./person-turn-slots.js";
import { qualifiedUserId } from "../approvals/authorisation.js";

export interface TurnSchedulerOptions extends TurnExecutorOptions {
  readonly lock: SessionLock;
  /** Called when a pump ends (the session may now be evictable). */
  readonly onIdle: (live: LiveSession) => void;
  /** Several processes on one store: who takes a session's pump, and input other processes queued. */
  readonly gate?: TurnGate;
  /** Saves a turn's end its session's next write did not carry (one process). */
  readonly endSaves: TurnEndSaves;
  /** The turns each person may run at once in this process. */
  readonly slots: PersonTurnSlots;
}

/** How a pump begins: with a message as its first turn, or under a lease already taken. */
type PumpStart = FirstTurn | { readonly lease: SessionLease };

/** Background turn execution for all sessions of this process. */
export class TurnScheduler {
  private readonly pumps = new Map<LiveSession, Promise<void>>();
  private stopping = false;
  private readonly turns: TurnExecutor;

  constructor(private readonly options: TurnSchedulerOptions) {
    this.turns = new TurnExecutor(options);
  }

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
      await this.offer(live, message, { steer: false, capped: false });
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
  async offer(live: LiveSession, message: QueuedMessage, input: GateInput): Promise<"queued" | "duplicate"> {
    const offered = await this.options.gate?.offer(live, message, input);
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
      !this.options.lock.isHeld(live.id) &&
      this.options.slots.tryTake(personOf(live, message.user));
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
      else if (start) {
        // A message started at once holds its person's slot (startNow).
        this.options.slots.release(personOf(live, start.message.user));
        start.failed(new Error("the session could not start the turn"));
      }
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
      if (first) this.options.slots.release(personOf(live, first.message.user));
      first?.failed(error);
      throw error;
    }
    if (!lease) return;
    try {
      await this.run(live, first);
    } finally {
      // The last turn's end is still only in memory (see TurnExecutor's `finish`). Another process
      // may take the session once the lease is let go, so there it is saved first; this process is
      // the only other taker, on this same session in memory, so here it may wait for the next write.
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
    if (first) {
      // Its slot was taken when it was started at once (startNow).
      try {
        await this.turns.start(live, first.message, first);
      } finally {
        this.options.slots.release(personOf(live, first.message.user));
      }
    }
    while (!this.stopping && !live.retired) {
      await gate?.collect(live);
      const record = live.record;
      const retry = live.retryBy;
      live.retryBy = undefined;
      const parked = live.parkedTurn();
      if (parked) await this.turns.resumeParked(live, parked);
      else if (retry) await this.inSlot(live, retry, () => this.turns.retry(live, retry));
      else if (record.queue[0])
        await this.inSlot(live, record.queue[0].user, () => {
          // Waiting for the slot, the queue may have changed ("stop" empties it).
          const next = live.record.queue[0];
          return next ? this.turns.start(live, next) : Promise.resolve();
        });
      else return;
    }
  }

  /**
   * Run a turn `user` starts in one of their slots, once one is free (not once shutdown began); a
   * turn that has to wait says so in its thread, which would otherwise stay silent.
   */
  private async inSlot(live: LiveSession, user: PlatformUser, turn: () => Promise<void>): Promise<void> {
    const { slots } = this.options;
    const person = personOf(live, user);
    if (!slots.tryTake(person)) {
      void this.turns.notify(
        live,
        `${user.name}, you have ${slots.perPerson} turns running in other threads; this one starts when one of them ends.`,
      );
      await slots.take(person);
    }
    try {
      if (!this.stopping && !live.retired) await turn();
    } finally {
      this.options.slots.release(person);
    }
  }

  /** Re-run the session's last turn after a provider error; false when a turn is running. */
  retry(live: LiveSession, user: PlatformUser): boolean {
    if (live.busy) return false;
    live.retryBy = user;
    this.schedule(live);
    return true;
  }
}

/** Whose slots a turn of `user` in `live` counts against. */
function personOf(live: LiveSession, user: PlatformUser): string {
  return qualifiedUserId(live.record.target.platform, user.id);
}
