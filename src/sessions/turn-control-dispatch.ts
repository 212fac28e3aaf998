/**
 * TurnControlDispatch: a change to a session runs where the session is held. Presses settled, retry
 * buttons, thread commands and "Allow anyway" grants taken by a process that does not hold the
 * session are sent to the holder over its control channel (turn-controls.ts); when no one holds
 * it, they run here under a lease taken for the moment. The controls other processes send here
 * are handled the same way, since this process may have let the session go meanwhile.
 */
import type { PlatformUser, ThreadTarget } from "../core/thread-target.js";
import type { Grant } from "../engine/permissions/grants.js";
import type { LeaseGate } from "./lease-gate.js";
import type { SessionLeases } from "./lease-lock.js";
import type { LiveSession } from "./live-session.js";
import type { MultiProcessHost } from "./multi-process-host.js";
import { hasPendingWork } from "./session-record.js";
import type { ThreadCommand } from "./text-commands.js";
import type { TurnControl, TurnControls } from "./turn-controls.js";

export interface TurnControlDispatchOptions {
  readonly leases: SessionLeases;
  readonly controls: TurnControls;
  /** Brings a copy taken here up to date, and lets the lease go after. */
  readonly gate: LeaseGate;
  readonly host: () => MultiProcessHost;
}

/** The reply to a command passed to the process running the thread's turn. */
const FORWARDED_REPLY = "Passed to the process running this thread's turn.";

/** Sends changes of sessions held elsewhere to their holders, and handles the controls sent here. */
export class TurnControlDispatch {
  constructor(private readonly options: TurnControlDispatchOptions) {}

  /**
   * Continue a session whose pending item was settled here: hand it to the turn waiting for it,
   * in the process holding the session, or resume the session here when no one holds it.
   */
  async resume(sessionId: string): Promise<void> {
    const host = this.options.host();
    const holder = await this.options.leases.holderElsewhere(sessionId);
    if (holder !== undefined) return this.options.controls.send(holder, { kind: "settled", sessionId });
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
      await this.options.controls.send(holder, {
        kind: "command",
        sessionId: live.id,
        target,
        user,
        command,
      });
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
      () => this.options.host().addGrant(live, grant),
      (holder) => this.options.controls.send(holder, { kind: "grant", sessionId: live.id, grant }),
    );
  }

  /** A retry button: retried where the session is held (told over its control channel), else here. */
  async retry(live: LiveSession, user: PlatformUser): Promise<boolean> {
    const { leases, controls } = this.options;
    if (leases.holding(live.id)) return this.options.host().retry(live, user);
    const holder = await leases.holderElsewhere(live.id);
    if (holder === undefined) return this.options.host().retry(live, user);
    await controls.send(holder, { kind: "retry", sessionId: live.id, user });
    return true;
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
          (holder) => this.options.controls.send(holder, control),
        );
        return;
      case "grant":
        await this.grant(live, control.grant);
        return;
    }
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
    const { leases, gate } = this.options;
    if (leases.holding(live.id)) return run();
    for (;;) {
      const holder = await leases.holderElsewhere(live.id);
      if (holder !== undefined) return forward(holder);
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
}
