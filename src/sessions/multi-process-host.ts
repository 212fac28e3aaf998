/**
 * MultiProcessHost: the session manager's side of the multi-process layer. The layer is built
 * before the session manager and bound to it late (MultiProcessSessions.bind); its parts — the
 * lease gate, the turn-control dispatch, failover — call back into the sessions through this port.
 */
import type { PlatformUser, ThreadTarget } from "../core/thread-target.js";
import type { Grant } from "../engine/permissions/grants.js";
import type { LiveSession } from "./live-session.js";
import type { QueueCap } from "./queue-cap.js";
import type { SessionLease } from "./session-lock.js";
import type { QueuedMessage } from "./session-record.js";
import type { ThreadCommand } from "../core/text-commands.js";

/** What the session manager lends the multi-process layer (bound late: built after it). */
export interface MultiProcessHost {
  liveById(sessionId: string): Promise<LiveSession | undefined>;
  /**
   * Make sure the session's pump runs here; with `lease` (taken here), the pump begins under it —
   * after the pump running now has ended (see TurnScheduler.schedule).
   */
  schedule(live: LiveSession, lease?: SessionLease): void;
  /** Give the session a fresh engine (after a reload). */
  rebind(live: LiveSession): void;
  /** Steer the running turn; false when none runs (see TurnScheduler.steer). */
  steer(live: LiveSession, message: QueuedMessage): Promise<boolean>;
  /** Re-run the session's last turn here (see TurnScheduler.retry); false when a turn is running. */
  retry(live: LiveSession, user: PlatformUser): boolean;
  /** Whether the session's turn is parked here waiting for a person. */
  isParked(sessionId: string): boolean;
  /** The sessions whose turns are parked here waiting for a person. */
  parkedSessions(): ReadonlySet<string>;
  /** Hand items of the session settled elsewhere to the turns waiting for them here. */
  recheckSettled(sessionId: string): Promise<void>;
  /**
   * Run a thread command here on the session `live` it was passed for (not on whichever session
   * the thread has now) and post its reply into the thread.
   */
  runCommand(
    live: LiveSession,
    target: ThreadTarget,
    user: PlatformUser,
    command: ThreadCommand,
  ): Promise<void>;
  /** Add a grant to the session's live grants, saved with its record (the caller holds the lease). */
  addGrant(live: LiveSession, grant: Grant): Promise<void>;
  /** The queue cap, checked here where the session is held (see QueueCap). */
  readonly queueCap: QueueCap;
}
