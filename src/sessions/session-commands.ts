/**
 * ThreadCommands: carries out the thread commands (stop, new, mode, model, status, grants,
 * approve, deny) for one thread and returns the reply text. The same code serves slash commands,
 * their typed forms and control buttons. A command looks the thread's session up once and acts on
 * that one: with several processes the routing looks it up and runs the command where it is held
 * (executeOn), so a command never changes a session another process started, or switched the
 * thread to, after that look-up — this process does not hold it, and its copy saved here would
 * overwrite the holder's record. The commands that change a session (mode, grants revoke, new,
 * stop) are written to the audit log with who ran them, once they took effect. Approve and deny
 * decide a pending item, not a session (typed-decisions.ts).
 */
import { type ApprovalsConfig, loosenersFor, mayDecide } from "../approvals/authorisation.js";
import type { PendingHub } from "../approvals/pending-hub.js";
import { loosensMode, type PermissionMode } from "../core/modes.js";
import type { ReviewerStats } from "../approvals/reviewer-stats.js";
import type { AuditRecord, AuditSink } from "../engine/audit-record.js";
import type { PlatformUser, ThreadTarget } from "../core/thread-target.js";
import { StaleFenceError } from "../store/coordination/coordination.js";
import type { LiveSession } from "./live-session.js";
import type { SessionCache } from "./session-cache.js";
import { describeGrants, describeStatus, shownPerson } from "./session-status.js";
import type { ThreadCommand } from "../core/text-commands.js";
import type { TurnScheduler } from "./turn-scheduler.js";
import { withTurnFinished } from "./turn-record-changes.js";
import { decideTyped, type TypedDecisionDeps } from "./typed-decisions.js";

/** What the thread commands act through (approve and deny: see TypedDecisionDeps). */
export interface ThreadCommandsDeps extends TypedDecisionDeps {
  readonly cache: SessionCache;
  readonly scheduler: TurnScheduler;
  readonly hub: PendingHub;
  readonly statusExtras?: ((sessionId: string) => Promise<readonly string[]>) | undefined;
  readonly reviewerStats?: ReviewerStats | undefined;
  /** The configured approvers, who may loosen sessions in shared threads. */
  readonly approvals: Pick<ApprovalsConfig, "approvers" | "perChannel">;
  /** The models on offer (see `setModel`): the configured model and the listed choices. */
  readonly models: ModelChoices;
  /**
   * With several processes: whether this process may retire the session and switch its thread to
   * a fresh one ("new") — only while it holds the session. Default: always (one process keeps
   * the thread index).
   */
  readonly mayReplace?: (sessionId: string) => boolean;
  /** Where the commands that change a session are recorded, with who ran them. */
  readonly audit: AuditSink;
  /**
   * Finish moving the thread's standing items to `live` when its record says some are still to
   * come (`itemsFrom`: "new" switched the thread to it, perhaps in a process that died before the
   * move). Awaited before a command on the session answers — "new" on the session it started — so
   * `status` lists them and "new" moves them on (never rejects).
   */
  readonly finishMove?: (live: LiveSession) => Promise<void>;
  readonly now: () => Date;
}

/** The kinds of audit record thread commands write. */
type CommandRecordKind = Extract<
  AuditRecord["kind"],
  "mode_switched" | "grants_revoked" | "session_renewed" | "session_stopped"
>;

/**
 * Whether the command acts on the thread's session, starting one when the thread has none; stop,
 * approve and deny never start one, and new, on a thread without one, starts the fresh one itself.
 */
function actsOnSession(command: ThreadCommand): boolean {
  return !["stop", "new", "approve", "deny"].includes(command.name);
}

/** Whether the command decides a pending item (approve, deny) rather than acting on a session. */
function decidesItem(command: ThreadCommand): boolean {
  return command.name === "approve" || command.name === "deny";
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** Why a person may not switch `live` to the less safe `mode`: who may. */
function ownerOnly(live: LiveSession, mode: PermissionMode): string {
  const starter = live.record.startedBy;
  if (!starter)
    return `Only a configured approver can switch this session to ${mode} mode: it was started before sessions recorded who started them, and nobody has claimed it since.`;
  return `Only the session's owner can switch it to ${mode} mode — in a shared thread, a configured approver (or, without one, ${shownPerson(live.record.target.platform, starter)}, who started the session).`;
}

/** The configured model, and the other models anyone may switch a session to (none listed: see `setModel`). */
export interface ModelChoices {
  readonly default: string;
  readonly choices: readonly string[];
}

/** Executes parsed thread commands. */
export class ThreadCommands {
  constructor(private readonly deps: ThreadCommandsDeps) {}

  /**
   * Run one command in the thread of `target` on behalf of `user`; resolves with the reply. The
   * thread's session is looked up first (see `sessionFor`) — except by approve and deny, which
   * act on a pending item.
   */
  async execute(target: ThreadTarget, user: PlatformUser, command: ThreadCommand): Promise<string> {
    const live = decidesItem(command) ? undefined : await this.sessionFor(target, user, command);
    return this.executeOn(live, target, user, command);
  }

  /**
   * The session `command` acts on: the thread's current one, started by `user` when the thread has
   * none — undefined then for the commands that never start one (stop, new, approve, deny).
   */
  sessionFor(
    target: ThreadTarget,
    user: PlatformUser,
    command: ThreadCommand,
  ): Promise<LiveSession | undefined> {
    const { cache } = this.deps;
    return actsOnSession(command) ? cache.forTarget(target, user) : cache.existingFor(target);
  }

  /**
   * Run one command on `live`, the thread's session as `sessionFor` found it (undefined: the
   * thread had none; approve and deny ignore it), never looking the thread's session up again.
   * With several processes the caller routed the command by `live` to where it is held; a
   * session another process started or switched the thread to since is that process's to change
   * — changing it here would save a copy this process does not hold over its holder's record.
   */
  async executeOn(
    live: LiveSession | undefined,
    target: ThreadTarget,
    user: PlatformUser,
    command: ThreadCommand,
  ): Promise<string> {
    if (live) await this.deps.finishMove?.(live);
    switch (command.name) {
      case "stop":
        return this.stop(live, target, user);
      case "new":
        return this.renew(target, user, live);
      case "approve":
      case "deny":
        return decideTyped(this.deps, target, user, command.id, command.name);
    }
    if (!live) throw new Error(`"${command.name}" acts on the thread's session, and it was given none`);
    switch (command.name) {
      case "mode":
        return this.setMode(live, target, user, command.mode);
      case "model":
        return this.setModel(live, target, user, command.model);
      case "status": {
        const reviewer = this.deps.reviewerStats?.statusLine(live.id);
        const extras = [
          ...((await this.deps.statusExtras?.(live.id)) ?? []),
          ...(reviewer ? [reviewer] : []),
        ];
        return describeStatus({
          record: live.record,
          running: live.activeTurn !== undefined,
          suspended: live.record.pendingTurn !== undefined,
          queued: live.record.queue.length,
          extras,
          now: this.deps.now(),
        });
      }
      case "grants":
        return describeGrants(live.grants.list(), this.deps.now());
      case "grants-revoke": {
        const held = live.grants.list();
        const count = held.length;
        if (command.index === undefined) {
          const removed = live.grants.revoke(() => true);
          await live.flush();
          if (removed === 0) return "No grants to revoke.";
          this.record("grants_revoked", live.id, target, user, { revoked: held });
          return `Revoked ${plural(removed, "grant")}.`;
        }
        if (command.index > count)
          return `There is no grant ${command.index}; this session has ${plural(count, "grant")}.`;
        live.grants.revoke(command.index - 1);
        await live.flush();
        this.record("grants_revoked", live.id, target, user, { revoked: [held[command.index - 1]] });
        return `Revoked grant ${command.index}.\n${describeGrants(live.grants.list(), this.deps.now())}`;
      }
      case "reviewer":
        return this.deps.reviewerStats?.describe(live.id) ?? "The safety reviewer is not set up here.";
    }
  }

  /**
   * Switch the session's mode. A less safe mode needs whoever may loosen the session (see
   * authorisation.ts); setting it never makes this person the session's starter. The mode the
   * session is in already changes nothing: nor who is named as having set it.
   */
  private async setMode(
    live: LiveSession,
    target: ThreadTarget,
    user: PlatformUser,
    mode: PermissionMode,
  ): Promise<string> {
    const previousMode = live.record.mode;
    if (previousMode === mode) return `Mode is already ${mode}.`;
    if (loosensMode(previousMode, mode) && !this.mayLoosen(live, target, user)) return ownerOnly(live, mode);
    await live.update((r) => ({ ...r, mode, modeSetBy: user }));
    this.record("mode_switched", live.id, target, user, { mode, previousMode });
    return `Mode set to ${mode}${live.activeTurn ? " (from the next turn)" : ""}.`;
  }

  /**
   * Switch the session's model. The model decides what a turn costs and what it can do, so with
   * a list of choices configured only those (and the configured model) are on offer, to anyone in
   * the thread; without one, any name may be chosen by the session's starter or whoever may loosen
   * it, and anyone may go back to the configured model.
   */
  private async setModel(
    live: LiveSession,
    target: ThreadTarget,
    user: PlatformUser,
    model: string,
  ): Promise<string> {
    const { models } = this.deps;
    const offered = [models.default, ...models.choices];
    if (!offered.includes(model)) {
      if (models.choices.length > 0)
        return `${model} is not offered here. Choose one of: ${offered.join(", ")}.`;
      const starter = live.record.startedBy;
      if (starter?.id !== user.id && !this.mayLoosen(live, target, user))
        return `Only ${starter ? `${shownPerson(live.record.target.platform, starter)}, who started the session, or a configured approver` : "a configured approver (the session has no starter on record)"} can switch it to a model of their choice (an admin can offer models to everyone with model.choices). Anyone can switch back to ${models.default}.`;
    }
    await live.update((r) => ({ ...r, model }));
    return `Model set to ${model}${live.activeTurn ? " (from the next turn)" : ""}.`;
  }

  /**
   * Whether `user` may loosen `live` (see authorisation.ts). A session without a starter (one
   * stored before starters were kept, whose history names none: see withStarter) is loosened only
   * by a configured approver, never claimed by whoever asks first.
   */
  private mayLoosen(live: LiveSession, target: ThreadTarget, user: PlatformUser): boolean {
    const allowed = loosenersFor(
      this.deps.approvals,
      knownAs(live.record.target, target),
      live.record.startedBy?.id,
    );
    return mayDecide(allowed, target.platform, user.id);
  }

  private async stop(
    live: LiveSession | undefined,
    target: ThreadTarget,
    user: PlatformUser,
  ): Promise<string> {
    if (!live) return "Nothing is running.";
    const queued = live.record.queue.length;
    if (live.untakenSteering.length > 0) live.discardSteering = true;
    if (queued > 0) await live.update((r) => ({ ...r, queue: [] }));
    const dropped = queued > 0 ? ` Dropped ${plural(queued, "queued message")}.` : "";
    const stopped = (what: "running turn" | "waiting turn" | "queue") =>
      this.record("session_stopped", live.id, target, user, { stopped: what, dropped: queued });
    if (live.activeTurn) {
      live.engine.interrupt();
      stopped("running turn");
      return `Stopping the running turn.${dropped}`;
    }
    if (live.record.pendingTurn) {
      // Suspended in the store (restart or eviction): close its cards, then let it end as stopped.
      await this.deps.hub.cancelSession(live.id, "the turn was stopped");
      this.deps.scheduler.schedule(live);
      stopped("waiting turn");
      return `Stopped the waiting turn.${dropped}`;
    }
    if (queued === 0) return "Nothing is running.";
    stopped("queue");
    return dropped.trim();
  }

  /**
   * "new": a thread without a session gets one as a message would start it — with several
   * processes claimed in one step, so when another process started the thread's session first,
   * that one (just started) is the fresh session. A thread's session is retired and replaced
   * where it is held; one this process let go of meanwhile is left alone. The fresh session takes
   * the default mode — unless that is less safe than the old one's and `user` may not loosen the
   * session: then it keeps the old mode, so "new" is no way around `mode`.
   */
  private async renew(
    target: ThreadTarget,
    user: PlatformUser,
    old: LiveSession | undefined,
  ): Promise<string> {
    const { cache } = this.deps;
    const keepMode =
      old !== undefined &&
      loosensMode(old.record.mode, cache.defaultMode) &&
      !this.mayLoosen(old, target, user);
    const fresh = old ? await this.replace(target, old, keepMode) : await cache.forTarget(target, user);
    if (!fresh) return "Another process holds this thread's session now: send `new` again to start afresh.";
    const { id, mode, model } = fresh.record;
    if (old) {
      this.record("session_renewed", old.id, target, user, { newSessionId: id, mode });
      await this.deps.finishMove?.(fresh);
    }
    if (!old || !keepMode) return `Started a new session (${id}). Mode ${mode}, model ${model}.`;
    return `Started a new session (${id}), model ${model}. Mode ${mode} kept from the previous session: ${ownerOnly(old, cache.defaultMode)}`;
  }

  /**
   * Retire the thread's session `old` — its queue dropped, its turn stopped (a suspended one's
   * marker cleared), its cards closed —
   * and make a fresh one the thread's (in `old`'s mode with `keepMode`); undefined when this
   * process may not (does not hold `old`, or lost it meanwhile: `old` is still the thread's
   * session then).
   */
  private async replace(
    target: ThreadTarget,
    old: LiveSession,
    keepMode: boolean,
  ): Promise<LiveSession | undefined> {
    const { cache, mayReplace } = this.deps;
    if (mayReplace?.(old.id) === false) return undefined;
    old.retired = true;
    try {
      old.discardSteering = true;
      if (old.record.queue.length > 0) await old.update((r) => ({ ...r, queue: [] }));
      if (old.activeTurn) old.engine.interrupt();
      // A turn suspended in the store (a restart, an eviction) ends here as stopped: nothing of
      // the session the person threw away is left to resume, by this process or the next.
      else if (old.record.pendingTurn) await old.update((r) => withTurnFinished(r, undefined));
      await this.deps.hub.cancelSession(old.id, "a new session was started");
      return await cache.renew(target, old, keepMode);
    } catch (error) {
      old.retired = false;
      if (error instanceof StaleFenceError) return undefined;
      throw error;
    }
  }

  /** Write a thread command's audit record: `user` changed session `sessionId` (see audit-record.ts). */
  private record(
    kind: CommandRecordKind,
    sessionId: string,
    target: ThreadTarget,
    user: PlatformUser,
    fields: Readonly<Record<string, unknown>>,
  ): void {
    this.deps.audit({
      kind,
      sessionId,
      turnId: "",
      callId: "",
      tool: "",
      at: this.deps.now().toISOString(),
      by: `${target.platform}:${user.id}`,
      byName: user.name,
      ...fields,
    });
  }
}

/**
 * The session's stored target, also under the other id the command's target knows its chat by
 * (`extra.alsoKnownAs`: a Telegram group upgraded to a supergroup since the session began, whose
 * approvers an admin may list under either id). The command's target is the same chat: it found
 * this session.
 */
function knownAs(stored: ThreadTarget, command: ThreadTarget): ThreadTarget {
  const alias = command.extra?.alsoKnownAs;
  if (alias === undefined || stored.extra?.alsoKnownAs !== undefined) return stored;
  return { ...stored, extra: { ...stored.extra, alsoKnownAs: alias } };
}
