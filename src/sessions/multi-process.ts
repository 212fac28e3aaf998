/**
 * MultiProcessSessions: what the session layer adds when several processes share one store
 * (Redis), put together for one process. Pumps run under the session's lease and input goes
 * through shared queues (lease-gate.ts); turn-state writes carry the lease's fence
 * (fenced-space.ts), and a record is saved with its place in the shared index of sessions with
 * work in the same fenced step; presses settled and commands taken elsewhere reach the holder
 * over its control channel (turn-control-dispatch.ts); sessions whose holder died are resumed by
 * failover (failover.ts).
 */
import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import { systemClock } from "../core/clock.js";
import {
  type Coordination,
  type FencedWrite,
  StaleFenceError,
  type StoreWrite,
} from "../store/coordination/coordination.js";
import type { KeyValueSpace, StoreNamespace } from "../store/store.js";
import { FailoverWatch } from "./failover.js";
import { fencedSpace } from "./fenced-space.js";
import { LeaseGate } from "./lease-gate.js";
import {
  DEFAULT_LEASE_TIMING,
  type LeaseTiming,
  SessionLeases,
  sessionLeaseKey,
  waitsUntilLapse,
} from "./lease-lock.js";
import type { MultiProcessHost } from "./multi-process-host.js";
import type { SharedRecords } from "./session-records.js";
import { sharedQueueName, type TakenInRecord, type ThreadNotice } from "./shared-queue.js";
import { TurnControlDispatch } from "./turn-control-dispatch.js";
import { TurnControls } from "./turn-controls.js";
import type { TurnGate } from "./turn-gate.js";

export interface MultiProcessOptions {
  readonly coordination: Coordination;
  /** The store's "sessions" space, where a thread's entry is read again under a lease (never written). */
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

/** The first wait before trying again for the lease of a missing session another process holds. */
const MISSING_RETRY_MS = 25;

/** The multi-process session layer of one process. */
export class MultiProcessSessions {
  readonly processId: string;
  private readonly coordination: Coordination;
  private readonly leases: SessionLeases;
  private readonly controls: TurnControls;
  private readonly leaseGate: LeaseGate;
  private readonly dispatch: TurnControlDispatch;
  private readonly failover: FailoverWatch;
  private readonly sessions: KeyValueSpace;
  private readonly timing: LeaseTiming;
  private host: MultiProcessHost | undefined;

  constructor(options: MultiProcessOptions) {
    this.coordination = options.coordination;
    this.sessions = options.sessions;
    this.processId = options.processId ?? randomBytes(6).toString("hex");
    const { logger } = options;
    const timing = options.timing ?? DEFAULT_LEASE_TIMING;
    this.timing = timing;
    const host = () => this.requireHost();
    this.leases = new SessionLeases({
      coordination: this.coordination,
      processId: this.processId,
      timing,
      logger,
      onLost: (sessionId) => void this.lost(sessionId),
    });
    this.controls = new TurnControls(
      this.coordination,
      this.processId,
      (c) => this.dispatch.handle(c),
      logger,
      {
        everyMs: timing.renewMs,
        clock: systemClock,
        needed: () => this.requireHost().parkedSessions().size > 0,
        regained: () => this.dispatch.recheckParked(),
      },
    );
    this.leaseGate = new LeaseGate({
      coordination: this.coordination,
      leases: this.leases,
      controls: this.controls,
      processId: this.processId,
      activeIndex: ACTIVE_SET,
      marksOf: options.marksOf,
      host,
      logger,
    });
    this.dispatch = new TurnControlDispatch({
      leases: this.leases,
      controls: this.controls,
      gate: this.leaseGate,
      host,
      timing,
    });
    this.failover = new FailoverWatch({
      orphans: () => this.coordination.unleasedMembers(ACTIVE_SET, sessionLeaseKey("")),
      resume: async (sessionId) => {
        const live = await this.requireHost().liveById(sessionId);
        // A turn still parked here from the lapsed lease continues under the lease taken back.
        if (live) this.requireHost().schedule(live, await this.leaseGate.retake(live));
      },
      intervalMs: options.failoverIntervalMs ?? timing.renewMs,
      clock: systemClock,
      logger,
    });
  }

  /**
   * Tell a session's thread through `notice` (the session manager's) when input queued there
   * cannot be read: it is dropped (see shared-queue.ts), and the people there send it again.
   */
  tellUnreadableInput(notice: ThreadNotice): void {
    this.leaseGate.queue.tellUnreadableThrough(notice);
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
    takenSoFar: (id) => this.leaseGate.queue.takenSoFar(id),
    put: (id, key, value, active, taken) => this.putRecord(id, key, value, active, taken),
    create: (threadKey, id, recordKey, value) =>
      this.coordination.insertIfAbsent({ namespace: "sessions", key: threadKey, value: id }, [
        { namespace: "sessions", key: recordKey, value },
      ]),
    replace: (previousId, threadKey, id, recordKey, value) =>
      this.replaceRecord(previousId, threadKey, id, recordKey, value),
    replaceMissing: (missingId, threadKey, id, recordKey, value) =>
      this.replaceMissing(missingId, threadKey, id, recordKey, value),
    activeIds: () => this.coordination.members(ACTIVE_SET),
  };

  /** The scheduler's gate: pumps run under the lease, input goes through the shared queue. */
  get gate(): TurnGate {
    return this.leaseGate;
  }

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
    if (!this.leases.holding(sessionId)) this.leaseGate.queue.forget(sessionId);
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
    return this.leases.healthy && (await this.coordination.ping()).ok;
  }

  /** Continue a session whose pending item was settled here (see TurnControlDispatch.resume). */
  resume(...args: Parameters<TurnControlDispatch["resume"]>): Promise<void> {
    return this.dispatch.resume(...args);
  }

  /** Run a thread command where the session is held (see TurnControlDispatch.command). */
  command(...args: Parameters<TurnControlDispatch["command"]>): Promise<string> {
    return this.dispatch.command(...args);
  }

  /** Add a grant to the session where it is held (see TurnControlDispatch.grant). */
  grant(...args: Parameters<TurnControlDispatch["grant"]>): Promise<void> {
    return this.dispatch.grant(...args);
  }

  /** A retry button: retried where the session is held, else here (see TurnControlDispatch.retry). */
  retry(...args: Parameters<TurnControlDispatch["retry"]>): Promise<boolean> {
    return this.dispatch.retry(...args);
  }

  /**
   * Save a record: under the session's lease, in one fenced step with its place in the active
   * index and the removal of the shared-queue entries it carries (`taken`, read when it was built:
   * entries taken in since are not in it, and stay queued). A session this process never
   * held is refused (nothing written): its record may be the one its holder runs, and a new
   * session's first record goes out with its thread's entry instead (`create`, `replaceMissing`).
   */
  private async putRecord(
    id: string,
    key: string,
    value: unknown,
    active: boolean,
    taken: TakenInRecord | undefined,
  ): Promise<void> {
    const fence = this.leases.fenceOf(id);
    if (!fence)
      throw new Error(`session ${id} was never held here: its record is written only under its lease`);
    await this.leaseGate.queue.saveTaken(id, taken, async (count) => {
      const writes: FencedWrite[] = [
        { op: "set", namespace: "sessions", key, value },
        { op: active ? "add-member" : "remove-member", set: ACTIVE_SET, member: id },
        ...(count > 0 ? [{ op: "trim" as const, queue: sharedQueueName(id), count }] : []),
      ];
      if (!(await this.coordination.fencedWrite(fence, writes))) throw new StaleFenceError(fence);
    });
  }

  /**
   * Write a new session's record and make it its thread's current session in place of
   * `previousId`, in one write fenced by that session's lease (see SharedRecords.replace).
   */
  private async replaceRecord(
    previousId: string,
    threadKey: string,
    id: string,
    recordKey: string,
    value: unknown,
  ): Promise<void> {
    const fence = this.leases.fenceOf(previousId);
    // Never held here: refused as a write under a fence older than any holder's.
    if (!fence) throw new StaleFenceError({ key: sessionLeaseKey(previousId), fence: 0 });
    const writes: FencedWrite[] = [
      { op: "set", namespace: "sessions", key: recordKey, value },
      { op: "set", namespace: "sessions", key: threadKey, value: id },
    ];
    if (!(await this.coordination.fencedWrite(fence, writes))) throw new StaleFenceError(fence);
  }

  /**
   * Make a new session its thread's current one in place of `missingId`, which the thread names
   * but whose record is missing: under that session's lease, taken for the moment, and only while
   * the thread still names it — false (nothing written) once it names another one, which a
   * process that got there first made. While another process holds the lease (making the
   * thread's session, most likely) this waits for it, up to a lease's TTL.
   */
  private async replaceMissing(
    missingId: string,
    threadKey: string,
    id: string,
    recordKey: string,
    value: unknown,
  ): Promise<boolean> {
    const waitAgain = waitsUntilLapse(this.timing, MISSING_RETRY_MS, this.timing.ttlMs);
    for (;;) {
      const held = await this.leases.take(missingId);
      if (held) {
        try {
          if ((await this.sessions.get(threadKey)) !== missingId) return false;
          await this.replaceRecord(missingId, threadKey, id, recordKey, value);
          return true;
        } finally {
          await held.release();
          this.leases.forgetSession(missingId);
        }
      }
      if ((await this.sessions.get(threadKey)) !== missingId) return false;
      if (!(await waitAgain()))
        throw new Error(
          `session ${missingId} has no record, and another process has held it for a lease's TTL`,
        );
    }
  }

  /**
   * The lease was lost while a turn ran: stop it (its successor continues it from the store). A
   * turn parked at a person is left alone — stopping it would cancel the card its successor uses.
   * The pump starts no other turn (turn-scheduler.ts). The count of shared-queue entries taken in
   * is kept until the pump lets the lease go (LeaseGate.release forgets it): a save still made
   * under this lease's fence — nobody took the session yet — carries those entries in the record,
   * so it must trim them from the shared queue in the same write, or the next holder takes them
   * from both and runs them twice.
   */
  private async lost(sessionId: string): Promise<void> {
    const host = this.requireHost();
    const live = await host.liveById(sessionId);
    if (live?.activeTurn && live.engine.isRunning && !host.isParked(sessionId)) live.engine.interrupt();
  }

  private requireHost(): MultiProcessHost {
    if (!this.host) throw new Error("the multi-process session layer is not bound to a session manager");
    return this.host;
  }
}
