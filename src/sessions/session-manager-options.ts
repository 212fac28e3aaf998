/**
 * SessionManagerOptions: what the session layer is built from (store, engine factory, defaults,
 * approvals policy, limits, logging and the hooks other modules plug in).
 */
import type { Logger } from "pino";
import type { Clock } from "../core/clock.js";
import type { PermissionMode } from "../core/modes.js";
import type { ThreadTarget } from "../core/thread-target.js";
import type { Coordination } from "../store/coordination/coordination.js";
import type { Store } from "../store/store.js";
import type { EngineFactory } from "./engine-context.js";
import type { ExtraCommand } from "./extra-commands.js";
import type { ItemCanceller } from "./item-cards.js";
import type { LeaseTiming } from "./lease-lock.js";
import type { SessionLock } from "./session-lock.js";
import type { TurnEnd } from "./turn-executor.js";

export interface SessionManagerOptions {
  readonly store: Store;
  readonly createEngine: EngineFactory;
  readonly defaults: {
    readonly model: string;
    /** Other models anyone may switch a session to; none: only its owner may pick another (see ThreadCommands). */
    readonly modelChoices?: readonly string[];
    readonly provider: string;
    readonly mode: PermissionMode;
    readonly maxSteps: number;
    readonly queueMode: "steer" | "followup";
  };
  readonly approvals: {
    /** Platform-qualified ids ("slack:U0123"). */
    readonly approvers: readonly string[];
    /** Keyed "platform:channel". */
    readonly perChannel?: Readonly<Record<string, readonly string[]>>;
    readonly ttlMs: number;
  };
  /**
   * Whether a person may still use the bot in a conversation under its platform's rules now
   * (rejects when the platform cannot say): `approve <id>` / `deny <id>`, typed in any
   * conversation, decide only for someone who may act in the one the item was asked in
   * (ThreadCommands). Absent: not checked.
   */
  readonly mayActIn?: (userId: string, target: ThreadTarget) => Promise<boolean>;
  readonly maxSessionsInMemory: number;
  /** Turns one person may run at once in this process (default DEFAULT_TURNS_PER_PERSON). */
  readonly maxTurnsPerPerson?: number;
  readonly workspace: { readonly root: string; readonly context: string };
  /** The append-only JSONL audit log. */
  readonly auditLogPath: string;
  readonly logger: Logger;
  readonly now?: () => Date;
  readonly newId?: () => string;
  /** Extra `status` lines for a session (subscriptions, schedules, …). */
  readonly statusExtras?: (sessionId: string) => Promise<readonly string[]>;
  /** Replaces the in-process session lock (e.g. a distributed one). */
  readonly lock?: SessionLock;
  /**
   * Several processes on one store: a distributed coordination (Redis) puts sessions under leases
   * with fenced writes, shared input queues, controls and failover. An in-process one changes nothing.
   */
  readonly coordination?: Coordination;
  /** Names this process in session leases and its control channel (no "/"; default random). */
  readonly processId?: string;
  /** Session lease TTL and renewal interval (default 15 s / 5 s). */
  readonly leaseTiming?: LeaseTiming;
  /** Told each time a session has no turn running or queued any more (after its last turn). */
  readonly onIdle?: (sessionId: string) => void;
  /** Told how each turn ended, with its request metadata (scheduled tasks count failed runs). */
  readonly onTurnEnd?: (end: TurnEnd) => void;
  /** Who cancels the standing items commands list as cards (by id prefix). */
  readonly itemCancellers?: readonly ItemCanceller[];
  /** Thread commands other modules add (e.g. `unsubscribe <channel>`). */
  readonly extraCommands?: readonly ExtraCommand[];
  /**
   * Told, and awaited, when "new" switched a thread from session `oldId` to `newId`: the modules
   * re-point the thread's standing items (subscriptions, scheduled tasks, read positions) to the
   * new session. Safe to repeat: a move cut short (a failure, a process that died) is tried again,
   * and finished when the new session is next loaded (standing-item-moves.ts). The command still
   * succeeds meanwhile: a wake for an item left under the old id is routed to the thread's current
   * session (SessionManager.wake).
   */
  readonly onSessionReplaced?: (oldId: string, newId: string) => Promise<void>;
  /** The waits before each retry of a failed `onSessionReplaced` (default 1 s, then 10 s). */
  readonly itemMoveRetryMs?: readonly number[];
  /** The timers those retries wait on (default: the system clock). */
  readonly clock?: Clock;
}
