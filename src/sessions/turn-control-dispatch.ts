/**
 * TurnControlDispatch: a change to a session runs where the session is held. Presses settled, retry
 * buttons, thread commands and "Allow anyway" grants taken by a process that does not hold the
 * session are sent to the holder over its control channel (turn-controls.ts); when no one holds
 * it, they run here under a lease taken for the moment. The controls other processes send here
 * are handled the same way, since this process may have let the session go meanwhile. A retry,
 * command or grant lives only in its control, so one its holder did not take (the holder died) is
 * not dropped: it goes to whoever holds the session once that lease lapses, or runs here. So does
 * a settlement's notice: a holder alive but briefly not listening (its subscription lost) renews
 * its lease all the while, so no failover would step in, and its parked turn would wait for good.
 */
import type { PlatformUser, ThreadTarget } from "../core/thread-target.js";
import type { Grant } from "../engine/permissions/grants.js";
import type { LeaseGate } from "./lease-gate.js";
import { type LeaseTiming, type SessionLeases, waitsUntilLapse } from "./lease-lock.js";
import type { LiveSession } from "./live-session.js";
import type { MultiProcessHost } from "./multi-process-host.js";
import { hasPendingWork } from "./session-record.js";
import type { ThreadCommand } from "../core/text-commands.js";
import type { TurnControl, TurnControls } from "./turn-controls.js";

export interface TurnControlDispatchOptions {
  readonly leases: SessionLeases;
  readonly controls: TurnControls;
  /** Brings a copy taken here up to date, and lets the lease go after. */
  readonly gate: LeaseGate;
  readonly host: () => MultiProcessHost;
  /** How long a dead holder's lease outlives it (TTL), and how often leases renew. */
  readonly timing: LeaseTiming;
}

/** The reply to a command passed to the process running the thread's turn. */
const FORWARDED_REPLY = "Passed to the process running this thread's turn.";

/** The first wait before looking again for the holder of a session whose holder took no control. */
const FIRST_HOLDER_WAIT_MS = 100;

/** Sends changes of sessions held elsewhere to their holders, and handles the controls sent here. */
export class TurnControlDispatch {
  constructor(private readonly options: TurnControlDispatchOptions) {}

  /**
   * Continue a session whose pending item was settled here: hand it to the turn waiting for it,
   * in the process holding the session, or resume the session here when no one holds it — where a
   * turn parked here under a lease lost meanwhile takes it when no one held the session since
   * (LeaseGate.retake), and is ended as stale when someone did (LeaseGate.endStale). A holder
   * that does not take the notice is looked up again until one does (see sendToHolder): the
   * settlement is in the store, but a holder that still renews its lease is never failed over.
   */
  async resume(sessionId: string): Promise<void> {
    const host = this.options.host();
    const { gate } = this.options;
    if (await this.sendToHolder({ kind: "settled", sessionId })) {
      // A turn still parked here from a lease lost is stale: the holder continues the session.
      // Only a session parked here has one (in memory): no other is loaded from the store.
      const live = host.isParked(sessionId) ? await host.liveById(sessionId) : undefined;
      if (live) await gate.endStale(live);
      return;
    }
    const live = await host.liveById(sessionId);
    // A turn still parked here from a lease lost takes the decision when no one held it since.
    if (live) host.schedule(live, await gate.retake(live));
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
    return this.whereHeld(
      live,
      run,
      { kind: "command", sessionId: live.id, target, user, command },
      FORWARDED_REPLY,
    );
  }

  /**
   * Add a grant ("Allow anyway") to the session where it is held — passed to the holding process,
   * else added here under the lease — so it joins the grants the session's next save writes,
   * never a stale copy's.
   */
  async grant(live: LiveSession, grant: Grant): Promise<void> {
    await this.whereHeld(
      live,
      () => this.options.host().addGrant(live, grant),
      { kind: "grant", sessionId: live.id, grant },
      undefined,
    );
  }

  /** A retry button: retried where the session is held (told over its control channel), else here. */
  async retry(live: LiveSession, user: PlatformUser): Promise<boolean> {
    if (!this.options.leases.holding(live.id)) {
      if (await this.sendToHolder({ kind: "retry", sessionId: live.id, user })) return true;
    }
    return this.options.host().retry(live, user);
  }

  /**
   * This process hears its controls again after a while it did not (ListeningWatch): a "settled"
   * notice sent meanwhile may be lost, and its sender may have given up. The items settled
   * elsewhere of the sessions whose turns are parked here, and which this process holds, are
   * handed to those turns.
   */
  async recheckParked(): Promise<void> {
    const host = this.options.host();
    for (const sessionId of host.parkedSessions())
      if (this.options.leases.holding(sessionId)) await host.recheckSettled(sessionId);
  }

  /** Handle a control another process sent this one (TurnControls' receiver). */
  async handle(control: TurnControl): Promise<void> {
    const host = this.options.host();
    const live = await host.liveById(control.sessionId);
    if (!live) return;
    const held = this.options.leases.holding(control.sessionId) !== undefined;
    switch (control.kind) {
      case "input":
        if (held) this.options.gate.inputArrived(live);
        else host.schedule(live);
        return;
      case "settled":
        if (held) await host.recheckSettled(control.sessionId);
        else await this.resume(control.sessionId);
        return;
      case "retry":
        // Passed here as to the holder, it may come after this process let go of the session: set
        // on this copy, it would wait here and run as an extra turn before the thread's next message.
        await this.retry(live, control.user);
        return;
      case "command":
        // Passed here as to the holder, it may come after this process let go of the session.
        await this.whereHeld(
          live,
          () => host.runCommand(live, control.target, control.user, control.command),
          control,
          undefined,
        );
        return;
      case "grant":
        await this.grant(live, control.grant);
        return;
    }
  }

  /**
   * Change the session where it is held: `run` here when this process holds it or can take it
   * (its copy brought up to date first, the lease released after), else send `control` to the
   * holder and answer `forwarded`.
   */
  private async whereHeld<T>(
    live: LiveSession,
    run: () => Promise<T>,
    control: TurnControl,
    forwarded: T,
  ): Promise<T> {
    const { leases, gate } = this.options;
    if (leases.holding(live.id)) return run();
    for (;;) {
      if (await this.sendToHolder(control)) return forwarded;
      // A turn left parked here by a lease lost is ended before a newer lease is taken (LeaseGate).
      await gate.endStale(live);
      const held = await leases.take(live.id);
      if (!held) {
        if (leases.holding(live.id)) return run();
        continue;
      }
      try {
        await gate.refresh(live, held);
        return await run();
      } finally {
        await gate.release(live, held);
        // What ran may have left its own pump work it could not start under this lease (a turn
        // parked in the store that "stop" ended): start it now, not at the next failover scan.
        if (hasPendingWork(live.record)) this.options.host().schedule(live);
      }
    }
  }

  /**
   * Send `control` to the process holding its session: false when no other process holds it.
   * A holder that does not take it has died (or lost Redis) and its lease lapses within a TTL of
   * its last renewal, so the holder is looked up again, after longer and longer waits, until
   * another process holds the session (the control goes there) or none does (false).
   */
  private async sendToHolder(control: TurnControl): Promise<boolean> {
    const { leases, controls, timing } = this.options;
    const waitAgain = waitsUntilLapse(timing, FIRST_HOLDER_WAIT_MS, timing.ttlMs + timing.renewMs);
    for (;;) {
      const holder = await leases.holderElsewhere(control.sessionId);
      if (holder === undefined) return false;
      if (await controls.send(holder, control)) return true;
      if (!(await waitAgain()))
        throw new Error(
          `process ${holder} holds session ${control.sessionId} but takes no controls, and its lease has not lapsed`,
        );
    }
  }
}
