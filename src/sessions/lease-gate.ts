/**
 * LeaseGate: the TurnGate when several processes share one store. A pump runs only under the
 * session's lease (lease-lock.ts), and this process's copy is brought up to date first when
 * another process held the session meanwhile; the workspace's downloaded files are read again
 * each time (other processes' sessions on the workspace may have downloaded some since:
 * workspace-downloads.ts). Input for a session is offered to its shared queue
 * (shared-queue.ts) — with its dedupe marks, and taking the session's lease when it is free, in
 * one round trip — and its holder is told (over turn-controls.ts), which takes the input in: a
 * running turn at once, else its pump. Letting a lease go saves the input taken in first, so it
 * leaves the shared queue, and serves input that arrived meanwhile.
 */
import type { Logger } from "pino";
import { type Coordination, type StoreWrite, tokenOwner } from "../store/coordination/coordination.js";
import type { HeldSession, SessionLeases } from "./lease-lock.js";
import type { LiveSession } from "./live-session.js";
import type { MultiProcessHost } from "./multi-process-host.js";
import type { SessionLease } from "./session-lock.js";
import type { QueuedMessage } from "./session-record.js";
import { type SharedEntry, SharedQueue, sharedQueueName } from "./shared-queue.js";
import { takesSteeringFrom } from "./steering.js";
import type { TurnControls } from "./turn-controls.js";
import type { GateInput, GateOffer, TurnGate } from "./turn-gate.js";

export interface LeaseGateOptions {
  readonly coordination: Coordination;
  readonly leases: SessionLeases;
  /** Tells a holding process that input is queued for its session. */
  readonly controls: TurnControls;
  /** This process, as named in lease tokens. */
  readonly processId: string;
  /** The shared index of sessions with unfinished work, which a session with queued input joins. */
  readonly activeIndex: string;
  /** The store writes that record a delivery's dedupe keys as seen (InboundDedupe.marksOf). */
  readonly marksOf: (keys: readonly string[]) => readonly StoreWrite[];
  readonly host: () => MultiProcessHost;
  readonly logger: Logger;
}

/** The scheduler's gate on leases: pumps run under the lease, input goes through the shared queue. */
export class LeaseGate implements TurnGate {
  /** The sessions' shared input queues; what a session took in leaves them with its record's next save. */
  readonly queue: SharedQueue;
  /** Sessions held here whose shared queue got input since it was last collected. */
  private readonly inputWaiting = new Set<string>();

  constructor(private readonly options: LeaseGateOptions) {
    this.queue = new SharedQueue(
      options.coordination,
      {
        admits: (live, entry) => this.admits(live, entry),
        take: (live, entry) => this.take(live, entry),
        fenceOf: (sessionId) => options.leases.fenceOf(sessionId),
      },
      options.logger,
    );
  }

  /** Take the session's lease, bring its copy up to date and take its queued input in. */
  async enter(live: LiveSession): Promise<SessionLease | undefined> {
    const { leases, controls } = this.options;
    const held = await leases.take(live.id);
    if (!held) {
      const holder = await leases.holderElsewhere(live.id);
      if (holder !== undefined) await controls.send(holder, { kind: "input", sessionId: live.id });
      return undefined;
    }
    try {
      await this.refresh(live, held);
      await this.queue.collect(live);
    } catch (error) {
      await this.release(live, held, false);
      throw error;
    }
    return { release: () => void this.release(live, held), signal: held.signal };
  }

  /** Take in the input other processes queued for the session since it was last collected. */
  async collect(live: LiveSession): Promise<void> {
    if (this.inputWaiting.delete(live.id)) await this.queue.collect(live);
  }

  /**
   * Offer a message for the session: queued with its dedupe marks (a duplicate changes nothing);
   * when the session was free, this process now holds it and has taken the queue in. Otherwise the
   * holder is told — or, when that is this process, the input is taken in here (a running turn
   * gets its steering at once).
   */
  async offer(live: LiveSession, message: QueuedMessage, input: GateInput): Promise<GateOffer> {
    const { leases, controls, processId } = this.options;
    await this.endStale(live);
    const outcome = await this.queue.offer(
      live.id,
      { message, ...input },
      {
        claims: this.options.marksOf(message.dedupeKeys ?? []),
        index: this.options.activeIndex,
        lease: leases.termsFor(live.id),
      },
    );
    if (outcome.status === "duplicate") return "duplicate";
    if (outcome.status === "queued") {
      const owner = outcome.holder === undefined ? undefined : tokenOwner(outcome.holder);
      if (owner !== undefined && owner !== processId)
        await controls.send(owner, { kind: "input", sessionId: live.id });
      else this.inputArrived(live);
      return "queued";
    }
    const held = await leases.adopt(live.id, outcome.grant);
    if (!held) return "queued";
    try {
      await this.refresh(live, held);
      await this.queue.takeItems(live, outcome.items);
    } catch (error) {
      await this.release(live, held, false);
      throw error;
    }
    return { release: () => void this.release(live, held), signal: held.signal };
  }

  /**
   * End a turn still parked here at a person for a session this process no longer holds — its
   * lease was lost while it waited — once another process has taken the session since (the store's
   * fence is past this process's): that holder continues the session from the store, and this
   * turn would hold up the pump of any lease taken here later, for good. It ends as interrupted,
   * quietly: its item and card are left to the holder (PendingHub), and its writes, under the old
   * fence, are refused. Resolves once its pump has ended, before any newer lease is taken here —
   * under one, its writes would go through. While no one took the session since, the turn here is
   * still its latest state, and is left waiting.
   */
  async endStale(live: LiveSession): Promise<void> {
    const { leases, coordination } = this.options;
    // (A turn runs in its pump: without one, nothing here waits.)
    if (!live.pump || leases.holding(live.id) || !this.options.host().isParked(live.id)) return;
    const fence = leases.fenceOf(live.id);
    if (!fence || (await coordination.currentFence(fence.key)) <= fence.fence) return;
    if (live.activeTurn && live.engine.isRunning) live.engine.interrupt();
    await live.pump;
  }

  /**
   * Take the session's lease back for a turn parked here under a lease lost while it waited, when
   * no other process took the session since (the lease taken now is the next one after this
   * process's): that turn is still the session's latest state. The session's items settled
   * meanwhile are handed to it, its writes go through under the new lease's fence, and the lease
   * is for the session's next pump, begun once the parked turn's has ended (TurnScheduler.schedule).
   * A turn that is stale (another process took the session since) is ended first (endStale).
   * Undefined when no such turn waits here, or the lease is not free.
   */
  async retake(live: LiveSession): Promise<SessionLease | undefined> {
    const { leases } = this.options;
    const host = this.options.host();
    await this.endStale(live);
    const before = leases.fenceOf(live.id);
    if (!live.pump || !before || leases.holding(live.id) || !host.isParked(live.id)) return undefined;
    // Only as the next holder: a lease of a later fence would let the turn's writes through.
    const held = await leases.take(live.id, before);
    if (!held) {
      // Held elsewhere now, or held between the check above and this take: the turn is stale.
      await this.endStale(live);
      return undefined;
    }
    try {
      await host.recheckSettled(live.id);
      await this.queue.collect(live);
    } catch (error) {
      await this.release(live, held, false);
      throw error;
    }
    return { release: () => void this.release(live, held), signal: held.signal };
  }

  /**
   * Input is waiting for a session held here: a running turn takes it at once, else its pump does
   * — as it does when taking it in at once fails (the failure is logged, the input stays queued).
   */
  inputArrived(live: LiveSession): void {
    this.inputWaiting.add(live.id);
    if (!(live.busy && live.activeTurn)) {
      this.options.host().schedule(live);
      return;
    }
    this.collect(live).catch((error) => {
      this.options.logger.warn(
        { err: error, sessionId: live.id },
        "taking in queued input during a turn failed; it is taken before the next one",
      );
      this.inputWaiting.add(live.id);
    });
  }

  /**
   * Bring this process's copy of the session up to date when another process may have changed it
   * (a reload reads the workspace's downloaded files too), else only the workspace's downloaded files.
   */
  async refresh(live: LiveSession, held: HeldSession): Promise<void> {
    if (!this.options.leases.mayBeStale(held)) return live.facts.downloadedFiles.catchUp();
    if (await live.reload()) this.options.host().rebind(live);
  }

  /**
   * Release the lease — after saving what was taken in and not saved yet, so it leaves the shared
   * queue — and serve input that arrived while it was held (the release says how much waits). A
   * lease lost and since taken again here (retake, or an offer while a turn was parked under it)
   * only goes: what was taken in, and the input waiting, are the newer lease's.
   */
  async release(live: LiveSession, held: HeldSession, save = true): Promise<void> {
    const current = this.options.leases.holding(live.id);
    if (current !== undefined && current !== held) {
      await held.release();
      return;
    }
    try {
      if (save && this.queue.untrimmed(live.id) > 0) await live.update((record) => record);
    } catch (error) {
      this.options.logger.warn(
        { err: error, sessionId: live.id },
        "saving taken input before release failed",
      );
    }
    this.queue.forget(live.id);
    this.inputWaiting.delete(live.id);
    const waiting = await held.release(sharedQueueName(live.id));
    if (waiting > 0) this.options.host().schedule(live);
  }

  /**
   * Whether the session held here takes one more entry of its shared queue: a person's message
   * not past the queue cap, steering included (it waits in the record's queue too), and any turn
   * the service asks for — as where one process runs the session.
   */
  private async admits(live: LiveSession, entry: SharedEntry): Promise<boolean> {
    const { queueCap } = this.options.host();
    if (!entry.capped || queueCap.admits(live, entry.message.user)) return true;
    const reason = await queueCap.refuse(live, entry.message.user);
    this.options.logger.warn({ sessionId: live.id, reason }, "refusing a queued message: the queue cap");
    return false;
  }

  /**
   * Take one admitted entry into the session held here: steer the running turn, or queue it in the
   * record. The entry is counted as taken already, so where it goes is decided at once: a record
   * built during a pause before it is in would remove it from the shared queue without holding it.
   */
  private async take(live: LiveSession, entry: SharedEntry): Promise<void> {
    if (entry.steer && takesSteeringFrom(live, entry.message.user)) {
      // Sends it into the turn and queues it in the record before its first pause.
      await this.options.host().steer(live, entry.message);
      return;
    }
    live.takeShared(entry.message);
  }
}
