/**
 * TurnScheduler: runs each session's turns one at a time, in the background. A session's pump
 * holds the session lock while it first resumes a turn left in progress (restart, eviction, a
 * decision that arrived with no turn waiting), then starts queued messages as turns until the
 * queue is empty; each turn itself is run by TurnExecutor (turn-executor.ts). A turn a person
 * starts (a message, a wake-up as them, a retry of their failed turn, whoever pressed it) runs in
 * one of their turn slots (person-turn-slots.ts; with several processes, shared by them:
 * shared-turn-slots.ts). The pump starts the first queued message whose sender has a free slot —
 * each person's own messages in their order — so a person who already runs as many turns as they
 * may holds up no one else in a thread they share (a retry, which re-runs the last turn, still
 * goes before any message). When no one queued has a free slot, the pump lets the session's lock
 * (lease) go while it waits for one of theirs, and takes it again before the turn starts: the lock
 * guards the session's record, which a wait changes nothing of, and holding it would keep other
 * processes from the session (with several, another one may take it and run the turn meanwhile;
 * the pump then finds the work gone). New work for the session ends the wait — also work that came
 * while the pump looked (it asks shared slots through the store, and lets its lease go, before it
 * waits) — and the pump looks at the queue again: its sender may have a free slot.
 * Each slot a pump takes — or a turn started at once brings — is given back once (pump-slots.ts).
 * Pumps are tracked so shutdown can wait for them, interrupt them, or leave turns parked at a
 * person (their state is durable) — never leaving a running tool call orphaned.
 */
import { type PlatformUser, replyingTo } from "../core/thread-target.js";
import type { LiveSession } from "./live-session.js";
import { type DrainReport, drainPumps } from "./pump-drain.js";
import { attachmentsOf } from "./request-builder.js";
import type { SessionLease, SessionLock } from "./session-lock.js";
import type { QueuedMessage } from "./session-record.js";
import { type FirstTurn, TurnExecutor, type TurnExecutorOptions } from "./turn-executor.js";
import type { TurnEndSaves } from "./turn-end-saves.js";
import type { GateInput, TurnGate } from "./turn-gate.js";
import type { TurnSlots } from "./person-turn-slots.js";
import { type HeldSlot, PumpSlots } from "./pump-slots.js";
import { retryRunsAs } from "./retry-requester.js";
import { takesSteeringFrom } from "./steering.js";
import { qualifiedUserId } from "../approvals/authorisation.js";

export interface TurnSchedulerOptions extends TurnExecutorOptions {
  readonly lock: SessionLock;
  /** Called when a pump ends (the session may now be evictable). */
  readonly onIdle: (live: LiveSession) => void;
  /** Several processes on one store: who takes a session's pump, and input other processes queued. */
  readonly gate?: TurnGate;
  /** Saves a turn's end its session's next write did not carry (one process). */
  readonly endSaves: TurnEndSaves;
  /** The turns each person may run at once (in this process, or with a gate across the processes). */
  readonly slots: TurnSlots;
}

/** A message started at once (startNow), in the slot taken for it. */
interface FirstInSlot extends FirstTurn {
  readonly slot: HeldSlot;
}

/** A turn the pump may start next: a person's first queued message, or (no message) a retry as them. */
interface NextTurn {
  readonly user: PlatformUser;
  readonly person: string;
  readonly message?: QueuedMessage;
}

/** How a pump begins: with a message as its first turn, or under a lease already taken. */
type PumpStart = FirstInSlot | { readonly lease: SessionLease };

/** Background turn execution for all sessions of this process. */
export class TurnScheduler {
  private readonly pumps = new Map<LiveSession, Promise<void>>();
  /** Sessions whose pump waits for a turn slot, without the session's lease; aborting ends the wait. */
  private readonly waitingForSlot = new Map<LiveSession, AbortController>();
  /**
   * Per session, how often work was scheduled: a pump that looked at the queue before work came
   * (while it asked for slots through the store, or let its lease go) does not wait on that look.
   */
  private readonly scheduled = new WeakMap<LiveSession, number>();
  private stopping = false;
  private readonly turns: TurnExecutor;
  private readonly pumpSlots: PumpSlots;

  constructor(private readonly options: TurnSchedulerOptions) {
    this.turns = new TurnExecutor(options);
    this.pumpSlots = new PumpSlots(options.slots);
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
      !this.options.lock.isHeld(live.id);
    const slot = idle ? this.pumpSlots.atOnce(personOf(live, message.user)) : undefined;
    if (!slot) return Promise.resolve(false);
    return new Promise<boolean>((resolve, reject) =>
      this.launch(live, {
        message,
        slot,
        saved: (write) => write.then(() => resolve(true), reject),
        failed: reject,
      }),
    );
  }

  /**
   * Make sure the session's pump runs; it picks up any pending work. Never waits for a turn. With
   * `start`, the pump begins under a lease already taken.
   */
  schedule(live: LiveSession, start?: { readonly lease: SessionLease }): void {
    // A pump waiting for a slot looks at the session's work again: new work's sender may have one.
    this.scheduled.set(live, (this.scheduled.get(live) ?? 0) + 1);
    this.waitingForSlot.get(live)?.abort();
    if (start && live.pump && !this.stopping && !live.retired && !this.waitingForSlot.has(live)) {
      // The pump is ending (it let the session go just before this process took it again).
      void live.pump.finally(() => this.schedule(live, start));
      return;
    }
    // A pump waiting for a turn slot takes the session again once it has one, or once its wait
    // ended (above); until then the session is left free (what the lease took in is saved as it
    // goes), for any process to take.
    if (live.pump || this.stopping || live.retired) {
      start?.lease.release();
      return;
    }
    this.launch(live, start);
  }

  /** Start the session's pump (none runs, none may start one meanwhile: see schedule, startNow). */
  private launch(live: LiveSession, start?: PumpStart): void {
    const pump = this.pumpUntilIdle(live, start);
    live.pump = pump;
    this.pumps.set(live, pump);
  }

  /** Run the session's pump (its failure logged), then let the session go idle. */
  private async pumpUntilIdle(live: LiveSession, start: PumpStart | undefined): Promise<void> {
    try {
      await this.pump(live, start);
    } catch (error) {
      this.options.logger.error({ err: error, sessionId: live.id }, "session pump failed");
    } finally {
      live.pump = undefined;
      this.pumps.delete(live);
      this.options.onIdle(live);
    }
  }

  /**
   * Send a message into the running turn; false when no turn is running to take it, or when the
   * message is not from the person the turn runs as (its tools act with that person's access and
   * channel memberships, so another person's words become a follow-up turn of their own). The
   * message is also queued (flagged as steering) until the engine takes it into the history, so it
   * survives a restart, and becomes a follow-up turn if the turn ends without taking it.
   */
  async steer(live: LiveSession, message: QueuedMessage): Promise<boolean> {
    if (!this.takesSteeringFrom(live, message.user)) return false;
    const saved = live.update((r) => ({ ...r, queue: [...r.queue, { ...message, steered: true }] }));
    live.engine.steer(message.text, attachmentsOf(message));
    await saved;
    return true;
  }

  /**
   * Whether `steer` would send a message from `user` into the session's running turn, answered at
   * once: a turn is running, as them.
   */
  takesSteeringFrom(live: LiveSession, user: PlatformUser): boolean {
    return takesSteeringFrom(live, user);
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
    // A pump waiting for a person's slot has no turn to end: it stops waiting (its messages stay queued).
    for (const waiting of this.waitingForSlot.values()) waiting.abort();
    const report = await drainPumps(this.pumps, graceMs, isParked, nextPark);
    await this.options.endSaves.all();
    return report;
  }

  /**
   * The pump: under the session's lease, its first turn (a message started at once), then a parked
   * turn, a retry or the queued messages, until none is left. A turn a person starts runs in one of
   * their slots: the first queued message whose sender has a free one starts (nextTurns); waiting
   * for one, the pump holds no lease (see the module header).
   */
  private async pump(live: LiveSession, start?: PumpStart): Promise<void> {
    const { gate } = this.options;
    const first = start && "message" in start ? start : undefined;
    let lease: SessionLease | undefined = start && "lease" in start ? start.lease : undefined;
    // The one slot the pump holds at a time: a person's turn runs in it, and it is given back
    // (giveBack) as that turn ends, or as the pump ends without running one in it.
    let slot: HeldSlot | undefined = first?.slot;
    // The people told in the thread that their turn waits for a slot.
    const noticed = new Set<string>();
    // Whether the pump still holds the session: a lease of several processes can be lost (a
    // renewal failed, or none came in time) while the pump runs. Then it starts no other turn —
    // another process may hold the session by now, and the input it took in stays in the shared
    // queue for that holder (lease-gate.ts) — and ends, letting what it holds go.
    const held = () => lease !== undefined && lease.signal?.aborted !== true;
    try {
      try {
        lease ??= await this.enter(live);
      } catch (error) {
        first?.failed(error);
        throw error;
      }
      if (first) {
        await this.turns.start(live, first.message, first);
        slot = this.pumpSlots.giveBack(slot);
      }
      while (lease && held() && !this.stopping && !live.retired) {
        if (gate) {
          await gate.collect(live);
          if (!held()) return;
        }
        const parked = live.parkedTurn();
        if (parked) {
          slot = this.pumpSlots.giveBack(slot);
          await this.turns.resumeParked(live, parked, held);
          continue;
        }
        if (live.retryBy && !retryRunsAs(live, live.retryBy)) {
          // Its requester is not on record (refused at the press, unless the press saw an older copy).
          live.retryBy = undefined;
          continue;
        }
        const seen = this.scheduled.get(live);
        const candidates = nextTurns(live);
        if (candidates.length === 0) return;
        // A slot in hand (waited for, or taken through the store) is for its person's next turn.
        let next = slot && candidates.find((turn) => turn.person === slot?.person);
        if (!next) {
          slot = this.pumpSlots.giveBack(slot);
          for (const turn of candidates) {
            const taken = this.options.slots.tryTake(turn.person);
            if (taken === true) {
              slot = { person: turn.person };
              next = turn;
              break;
            }
            if (taken !== false && (await taken)) {
              slot = { person: turn.person };
              break;
            }
          }
        }
        // Shared slots answer through the store: the work is looked at again, slot in hand.
        if (slot && !next) continue;
        if (!next) {
          // A turn that has to wait says so in its thread, which would otherwise stay silent.
          for (const { user, person, message } of candidates) {
            if (noticed.has(person)) continue;
            noticed.add(person);
            void this.turns.notify(
              live,
              this.pumpSlots.waitingNotice(live.record.target.platform, user),
              replyingTo(live.record.target, message?.targetExtra),
            );
          }
          await this.letGo(live, lease);
          lease = undefined;
          const waiting = new AbortController();
          this.waitingForSlot.set(live, waiting);
          // Work scheduled since the look above, or a drain begun, found no wait to end: it ends now.
          if (this.stopping || this.scheduled.get(live) !== seen) waiting.abort();
          try {
            slot = await this.pumpSlots.ofAnyOf(
              candidates.map((turn) => turn.person),
              waiting.signal,
            );
          } finally {
            this.waitingForSlot.delete(live);
          }
          if (this.stopping || live.retired) return;
          // Meanwhile the work may have changed ("stop" empties the queue, new work ended the
          // wait) or been run elsewhere.
          lease = await this.enter(live);
          continue;
        }
        // (The slot may have come through the store: the lease is looked at again, with no wait
        // between here and the turn's start, which a loss after it interrupts.)
        if (!held()) return;
        live.retryBy = undefined;
        if (next.message) await this.turns.start(live, next.message);
        else await this.turns.retry(live, next.user);
        slot = this.pumpSlots.giveBack(slot);
      }
    } finally {
      this.pumpSlots.giveBack(slot);
      // Awaited only when there is something to wait for (an await of undefined costs a promise).
      const lettingGo = lease && this.letGo(live, lease);
      if (lettingGo) await lettingGo;
    }
  }

  /** Take the session's lease (the lock; several processes: through the gate, undefined when held elsewhere). */
  private enter(live: LiveSession): Promise<SessionLease | undefined> {
    const { gate } = this.options;
    return gate ? gate.enter(live) : this.options.lock.acquire(live.id);
  }

  /**
   * Let the session's lease go. The last turn's end is still only in memory (see TurnExecutor's
   * `finish`). Another process may take the session once the lease is let go, so there it is
   * saved first (awaited); this process is the only other taker, on this same session in memory,
   * so here it may wait for the next write, and the lease goes at once.
   */
  private letGo(live: LiveSession, lease: SessionLease): Promise<void> | undefined {
    if (this.options.gate) return live.flush().finally(() => lease.release());
    lease.release();
    this.options.endSaves.later(live);
    return undefined;
  }

  /**
   * Re-run the session's last turn after a provider error, as its requester (retry-requester.ts:
   * `presser` only names them on records from before requesters were kept); false when a turn is
   * running. Who may press it is the caller's to check (retryRefusal).
   */
  retry(live: LiveSession, presser: PlatformUser): boolean {
    if (live.busy) return false;
    live.retryBy = presser;
    this.schedule(live);
    return true;
  }
}

/**
 * The turns the pump may start next, the first preferred: a retry alone (it re-runs the last turn,
 * so no message may go before it; it runs as the failed turn's requester, never as whoever pressed
 * Retry), else each person's first queued message, in queue order. One person's messages so run in
 * their order, and one whose slots are all in use holds up no one else.
 */
function nextTurns(live: LiveSession): NextTurn[] {
  const retry = live.retryBy && retryRunsAs(live, live.retryBy);
  if (retry) return [{ user: retry, person: personOf(live, retry) }];
  const turns: NextTurn[] = [];
  for (const message of live.record.queue) {
    const person = personOf(live, message.user);
    if (!turns.some((turn) => turn.person === person)) turns.push({ user: message.user, person, message });
  }
  return turns;
}

/** Whose slots a turn of `user` in `live` counts against. */
function personOf(live: LiveSession, user: PlatformUser): string {
  return qualifiedUserId(live.record.target.platform, user.id);
}
