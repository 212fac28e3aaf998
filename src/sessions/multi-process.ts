/**
 * MultiProcessSessions: what the session layer adds when several processes share one store
 * (Redis). Pumps run under the session's lease (lease-lock.ts) and bring their copy up to date
 * when another process held it meanwhile; turn-state writes carry the lease's fence
 * (fenced-space.ts), and a record is saved with its place in the shared index of sessions with
 * work in the same fenced step; input for a session is offered to its shared queue
 * (shared-queue.ts) — with its dedupe marks, and taking the session's lease when it is free, in
 * one round trip — and its holder is told; presses settled and commands taken elsewhere reach the
 * holder over its control channel (turn-controls.ts); sessions whose holder died are resumed by
 * failover (failover.ts).
 */
import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import type { PlatformUser, ThreadTarget } from "../core/thread-target.js";
import type { Grant } from "../engine/permissions/grants.js";
import {
  type Coordination,
  type FencedWrite,
  StaleFenceError,
  type StoreWrite,
  tokenOwner,
} from "../store/coordination/coordination.js";
import type { KeyValueSpace, StoreNamespace } from "../store/store.js";
import { FailoverWatch } from "./failover.js";
import { fencedSpace } from "./fenced-space.js";
import {
  DEFAULT_LEASE_TIMING,
  type HeldSession,
  type LeaseTiming,
  SessionLeases,
  sessionLeaseKey,
} from "./lease-lock.js";
import type { LiveSession } from "./live-session.js";
import type { QueueCap } from "./queue-cap.js";
import type { SessionLease } from "./session-lock.js";
import { hasPendingWork, type QueuedMessage } from "./session-record.js";
import type { SharedRecords } from "./session-records.js";
import { type SharedEntry, SharedQueue, sharedQueueName } from "./shared-queue.js";
import type { ThreadCommand } from "./text-commands.js";
import { type TurnControl, TurnControls } from "./turn-controls.js";
import type { GateOffer, TurnGate } from "./turn-gate.js";

/** What the session manager lends the multi-process layer (bound late: built after it). */
export interface MultiProcessHost {
  liveById(sessionId: string): Promise<LiveSession | undefined>;
  /** Make sure the session's pump runs here. */
  schedule(live: LiveSession): void;
  /** Give the session a fresh engine (after a reload). */
  rebind(live: LiveSession): void;
  /** Steer the running turn; false when none runs (see TurnScheduler.steer). */
  steer(live: LiveSession, message: QueuedMessage): Promise<boolean>;
  /** Re-run the session's last turn here (see TurnScheduler.retry); false when a turn is running. */
  retry(live: LiveSession, user: PlatformUser): boolean;
  /** Whether the session's turn is parked here waiting for a person. */
  isParked(sessionId: string): boolean;
  /** Hand items of the session settled elsewhere to the turns waiting for them here. */
  recheckSettled(sessionId: string): Promise<void>;
  /** Run a thread command here and post its reply into the thread. */
  runCommand(target: ThreadTarget, user: PlatformUser, command: ThreadCommand): Promise<void>;
  /** Add a grant to the session's live grants, saved with its record (the caller holds the lease). */
  addGrant(live: LiveSession, grant: Grant): Promise<void>;
  /** The queue cap, checked here where the session is held (see QueueCap). */
  readonly queueCap: QueueCap;
}

export interface MultiProcessOptions {
  readonly coordination: Coordination;
  /** The store's "sessions" space: records of sessions not held here are written to it directly. */
  readonly sessions: KeyValueSpace;
  /** The store writes that record a delivery's dedupe keys as seen (InboundDedupe.marksOf). */
  readonly marksOf: (keys: readonly string[]) => readonly StoreWrite[];
  /** Names this process in leases and control channels (no "/"); default random. */
  readonly processId?: string | undefined;
  readonly timing?: LeaseTiming | undefined;
  /** How often to look for orphaned sessions; default the lease renewal interval. */
  readonly failoverIntervalMs?: number | undefined;
  readonly logger: Logger;
}

/** Shared set of sessions with unfinished work. */
const ACTIVE_SET = "active-sessions";

/** The reply to a command passed to the process running the thread's turn. */
export const FORWARDED_REPLY = "Passed to the process running this thread's turn.";

/** The multi-process session layer of one process. */
export class MultiProcessSessions {
  readonly processId: string;
  private readonly coordination: Coordination;
  private readonly leases: SessionLeases;
  private readonly queue: SharedQueue;
  private readonly controls: TurnControls;
  private readonly failover: FailoverWatch;
  private readonly logger: Logger;
  private readonly sessions: KeyValueSpace;
  private readonly marksOf: (keys: readonly string[]) => readonly StoreWrite[];
  /** Sessions held here whose shared queue got input since it was last collected. */
  private readonly inputWaiting = new Set<string>();
  private host: MultiProcessHost | undefined;

  constructor(options: MultiProcessOptions) {
    this.coordination = options.coordination;
    this.sessions = options.sessions;
    this.marksOf = options.marksOf;
    this.logger = options.logger;
    this.processId = options.processId ?? randomBytes(6).toString("hex");
    const timing = options.timing ?? DEFAULT_LEASE_TIMING;
    this.leases = new SessionLeases({
      coordination: this.coordination,
      processId: this.processId,
      timing,
      logger: this.logger,
      onLost: (sessionId) => void this.lost(sessionId),
    });
    this.queue = new SharedQueue(
      this.coordination,
      (live, entry) => this.take(live, entry),
      (sessionId, error) =>
        this.logger.error({ err: error, sessionId }, "dropping an unreadable queued input"),
    );
    this.controls = new TurnControls(this.coordination, this.processId, (c) => this.handle(c), this.logger);
    this.failover = new FailoverWatch({
      orphans: () => this.coordination.unleasedMembers(ACTIVE_SET, sessionLeaseKey("")),
      resume: async (sessionId) => {
        const live = await this.requireHost().liveById(sessionId);
        if (live) this.requireHost().schedule(live);
      },
      intervalMs: options.failoverIntervalMs ?? timing.renewMs,
      logger: this.logger,
    });
  }

  /** Bind the session manager's side (once, from its constructor). */
  bind(host: MultiProcessHost): void {
    this.host = host;
  }

  /** The turn-state spaces (records, history, journal) with writes fenced by the held leases. */
  space(base: KeyValueSpace, namespace: StoreNamespace): KeyValueSpace {
    return fencedSpace(base, namespace, this.coordination, (id) => this.leases.fenceOf(id));
  }

  /** Session records and the active-sessions index, shared by every process. */
  readonly records: SharedRecords = {
    put: (id, key, value, active) => this.putRecord(id, key, value, active),
    create: (threadKey, id, recordKey, value) =>
      this.coordination.insertIfAbsent({ namespace: "sessions", key: threadKey, value: id }, [
        { namespace: "sessions", key: recordKey, value },
      ]),
    activeIds: () => this.coordination.members(ACTIVE_SET),
  };

  /** The scheduler's gate: pumps run under the lease, input goes through the shared queue. */
  readonly gate: TurnGate = {
    enter: (live) => this.enter(live),
    collect: async (live) => {
      if (this.inputWaiting.delete(live.id)) await this.queue.collect(live);
    },
    offer: (live, message, steer) => this.offer(live, message, steer),
  };

  /** Start receiving controls and watching for orphaned sessions. */
  async start(): Promise<void> {
    await this.controls.start();
    this.failover.start();
  }

  /** Shutdown: stop watching and receiving, release every lease (parked turns stay in the store). */
  async stop(): Promise<void> {
    await this.failover.stop();
    await this.controls.stop();
    await this.leases.releaseAll();
  }

  /** A session's copy left this process's memory: forget its lease bookkeeping and taken input. */
  forgetSession(sessionId: string): void {
    this.leases.forgetSession(sessionId);
    if (!this.leases.holding(sessionId)) this.queue.forget(sessionId);
  }

  /** Whether this process holds the session (its copy is then the session's current state). */
  holdsHere(sessionId: string): boolean {
    return this.leases.holding(sessionId) !== undefined;
  }

  /** Whether any process (this one included) holds the session's lease now. */
  async isHeld(sessionId: string): Promise<boolean> {
    if (this.leases.holding(sessionId)) return true;
    return (await this.coordination.holder(sessionLeaseKey(sessionId))) !== undefined;
  }

  /** For /readyz: the coordination answers and lease renewals are going through. */
  async ready(): Promise<boolean> {
    return this.leases.healthy && (await this.coordination.ping());
  }

  /**
   * Continue a session whose pending item was settled here: hand it to the turn waiting for it,
   * in the process holding the session, or resume the session here when no one holds it.
   */
  async resume(sessionId: string): Promise<void> {
    const host = this.requireHost();
    const holder = await this.leases.holderElsewhere(sessionId);
    if (holder !== undefined) return this.controls.send(holder, { kind: "settled", sessionId });
    const live = await host.liveById(sessionId);
    if (live) host.schedule(live);
  }

  /**
   * Run a thread command for `live` where it belongs: passed to the process holding the session
   * (the reply says so; that process posts the command's own reply), else here under the lease.
   */
  async command(
    live: LiveSession,
    target: ThreadTarget,
    user: PlatformUser,
    command: ThreadCommand,
    run: () => Promise<string>,
  ): Promise<string> {
    return this.whereHeld(live, run, async (holder) => {
      await this.controls.send(holder, { kind: "command", sessionId: live.id, target, user, command });
      return FORWARDED_REPLY;
    });
  }

  /**
   * Add a grant ("Allow anyway") to the session where it is held — passed to the holding process,
   * else added here under the lease — so it joins the grants the session's next save writes,
   * never a stale copy's.
   */
  async grant(live: LiveSession, grant: Grant): Promise<void> {
    await this.whereHeld(
      live,
      () => this.requireHost().addGrant(live, grant),
      (holder) => this.controls.send(holder, { kind: "grant", sessionId: live.id, grant }),
    );
  }

  /**
   * Change the session where it is held: `run` here when this process holds it or can take it
   * (its copy brought up to date first, the lease released after), else `forward` to the holder.
   */
  private async whereHeld<T>(
    live: LiveSession,
    run: () => Promise<T>,
    forward: (holder: string) => Promise<T>,
  ): Promise<T> {
    if (this.leases.holding(live.id)) return run();
    for (;;) {
      const holder = await this.leases.holderElsewhere(live.id);
      if (holder !== undefined) return forward(holder);
      const held = await this.leases.take(live.id);
      if (!held) {
        if (this.leases.holding(live.id)) return run();
        continue;
      }
      try {
        await this.refresh(live, held);
        return await run();
      } finally {
        await this.release(live, held);
        // What ran may have left its own pump work it could not start under this lease (a turn
        // parked in the store that "stop" ended): start it now, not at the next failover scan.
        if (hasPendingWork(live.record)) this.requireHost().schedule(live);
      }
    }
  }

  /** A retry button: retried where the session is held (told over its control channel), else here. */
  async retry(live: LiveSession, user: PlatformUser): Promise<boolean> {
    if (this.leases.holding(live.id)) return this.requireHost().retry(live, user);
    const holder = await this.leases.holderElsewhere(live.id);
    if (holder === undefined) return this.requireHost().retry(live, user);
    await this.controls.send(holder, { kind: "retry", sessionId: live.id, user });
    return true;
  }

  /**
   * Offer a message for the session: queued with its dedupe marks (a duplicate changes nothing);
   * when the session was free, this process now holds it and has taken the queue in. Otherwise the
   * holder is told — or, when that is this process, the input is taken in here (a running turn
   * gets its steering at once).
   */
  private async offer(live: LiveSession, message: QueuedMessage, steer: boolean): Promise<GateOffer> {
    const outcome = await this.queue.offer(
      live.id,
      { message, steer },
      {
        claims: this.marksOf(message.dedupeKeys ?? []),
        index: ACTIVE_SET,
        lease: this.leases.termsFor(live.id),
      },
    );
    if (outcome.status === "duplicate") return "duplicate";
    if (outcome.status === "queued") {
      const owner = outcome.holder === undefined ? undefined : tokenOwner(outcome.holder);
      if (owner !== undefined && owner !== this.processId)
        await this.controls.send(owner, { kind: "input", sessionId: live.id });
      else this.inputArrived(live);
      return "queued";
    }
    const held = await this.leases.adopt(live.id, outcome.grant);
    if (!held) return "queued";
    try {
      await this.refresh(live, held);
      await this.queue.takeItems(live, outcome.items);
    } catch (error) {
      await this.release(live, held, false);
      throw error;
    }
    return { release: () => void this.release(live, held) };
  }

  private async enter(live: LiveSession): Promise<SessionLease | undefined> {
    const held = await this.leases.take(live.id);
    if (!held) {
      const holder = await this.leases.holderElsewhere(live.id);
      if (holder !== undefined) await this.controls.send(holder, { kind: "input", sessionId: live.id });
      return undefined;
    }
    try {
      await this.refresh(live, held);
      await this.queue.collect(live);
    } catch (error) {
      await this.release(live, held, false);
      throw error;
    }
    return { release: () => void this.release(live, held) };
  }

  /** Input is waiting for a session held here: a running turn takes it at once, else its pump does. */
  private inputArrived(live: LiveSession): void {
    this.inputWaiting.add(live.id);
    if (live.busy && live.activeTurn) void this.gate.collect(live);
    else this.requireHost().schedule(live);
  }

  /**
   * Save a record: under the session's lease, in one fenced step with its place in the active
   * index and the removal of the shared-queue entries it took in; a session not held here (a new
   * one) is written directly — joining the index before its record, leaving it after.
   */
  private async putRecord(id: string, key: string, value: unknown, active: boolean): Promise<void> {
    const fence = this.leases.fenceOf(id);
    if (!fence) {
      if (active) await this.coordination.addMember(ACTIVE_SET, id);
      await this.sessions.set(key, value);
      if (!active) await this.coordination.removeMember(ACTIVE_SET, id);
      return;
    }
    const taken = this.queue.untrimmed(id);
    const writes: FencedWrite[] = [
      { op: "set", namespace: "sessions", key, value },
      { op: active ? "add-member" : "remove-member", set: ACTIVE_SET, member: id },
      ...(taken > 0 ? [{ op: "trim" as const, queue: sharedQueueName(id), count: taken }] : []),
    ];
    if (!(await this.coordination.fencedWrite(fence, writes))) throw new StaleFenceError(fence);
    this.queue.trimmed(id, taken);
  }

  /** Bring this process's copy of the session up to date when another process may have changed it. */
  private async refresh(live: LiveSession, held: HeldSession): Promise<void> {
    if (this.leases.mayBeStale(held) && (await live.reload())) this.requireHost().rebind(live);
  }

  /**
   * Release the lease — after saving what was taken in and not saved yet, so it leaves the shared
   * queue — and serve input that arrived while it was held (the release says how much waits).
   */
  private async release(live: LiveSession, held: HeldSession, save = true): Promise<void> {
    try {
      if (save && this.queue.untrimmed(live.id) > 0) await live.update((record) => record);
    } catch (error) {
      this.logger.warn({ err: error, sessionId: live.id }, "saving taken input before release failed");
    }
    this.queue.forget(live.id);
    this.inputWaiting.delete(live.id);
    const waiting = await held.release(sharedQueueName(live.id));
    if (waiting > 0) this.requireHost().schedule(live);
  }

  /** One shared-queue entry into the session: steer the running turn, or queue it in the record. */
  /**
   * Take one entry of the shared queue into the session held here. Past the queue cap it is
   * refused: counted as taken, it leaves the shared queue with the session's next save.
   */
  private async take(live: LiveSession, entry: SharedEntry): Promise<void> {
    const host = this.requireHost();
    if (entry.steer && (await host.steer(live, entry.message))) return;
    if (await host.queueCap.admits(live)) live.takeShared(entry.message);
    else this.logger.warn({ sessionId: live.id }, "refusing a queued message: the session's queue is full");
  }

  private async handle(control: TurnControl): Promise<void> {
    const host = this.requireHost();
    const live = await host.liveById(control.sessionId);
    if (!live) return;
    const held = this.leases.holding(control.sessionId) !== undefined;
    switch (control.kind) {
      case "input":
        if (held) this.inputArrived(live);
        else host.schedule(live);
        return;
      case "settled":
        if (held) await host.recheckSettled(control.sessionId);
        else await this.resume(control.sessionId);
        return;
      case "retry":
        host.retry(live, control.user);
        return;
      case "command":
        // Passed here as to the holder, it may come after this process let go of the session.
        await this.whereHeld(
          live,
          () => host.runCommand(control.target, control.user, control.command),
          (holder) => this.controls.send(holder, control),
        );
        return;
      case "grant":
        await this.grant(live, control.grant);
        return;
    }
  }

  /**
   * The lease was lost while a turn ran: stop it (its successor continues it from the store). A
   * turn parked at a person is left alone — stopping it would cancel the card its successor uses.
   */
  private async lost(sessionId: string): Promise<void> {
    this.queue.forget(sessionId);
    const host = this.requireHost();
    const live = await host.liveById(sessionId);
    if (live?.activeTurn && live.engine.isRunning && !host.isParked(sessionId)) live.engine.interrupt();
  }

  private requireHost(): MultiProcessHost {
    if (!this.host) throw new Error("the multi-process session layer is not bound to a session manager");
    return this.host;
  }
}
