/**
 * ScheduleService: scheduled tasks and wake-ups, durable and exactly-once. Tools call `preview` /
 * `create` / `wakeLater` / `linesFor` / `toCancel` / `cancel` (commands `listFor` too); the session
 * layer reports how each scheduled turn ended (`turnEnded`) and a thread's switch to a new
 * session (`moveSession`: the thread's tasks follow it). Which task a cancel ends, and whether
 * the actor may end it, is decided in one place (`toCancel`), for the cancel and its approval card.
 * Tasks live in the store (TaskRegistry), and their runs are TaskRuns' work (task-runs.ts): each
 * occurrence claimed before it runs, so none runs twice. Guards: the planner's minimum interval,
 * the limits on tasks per person and per workspace (task-limits.ts), wake_me_later's own bounds
 * (wake-later.ts), and failed runs in a row pause a task.
 *
 * Several processes on one store: the active-task limits are counted, a person's listing made
 * (`refreshFor`, then `listFor`) and a removed channel's tasks found on the registry's view
 * refreshed from the store first (TaskRegistry.refresh), so tasks other processes created or
 * changed count, are listed and are paused too; tasks this process learns of that way are armed
 * here as well (their occurrences are claimed, so each still runs once). Once started, the
 * catalog is also re-read every quarter of the catch-up window, so a task another process created
 * runs here when that process is down at its time. The count is not atomic
 * across processes (no lock): creates at the same moment on several processes may each pass,
 * leaving a person or workspace over the limit by at most one per other process creating then.
 */
import { randomBytes } from "node:crypto";
import { mayDecide } from "../approvals/authorisation.js";
import type { Caller, ThreadTarget } from "../core/thread-target.js";
import type { SlotBudget } from "../store/slot-budget.js";
import type { Store } from "../store/store.js";
import type { Outcome } from "../subscriptions/channel-access.js";
import { type Clock, systemClock } from "../core/clock.js";
import { PeriodicTask } from "../core/periodic-task.js";
import type { WakeableSessions } from "../subscriptions/session-wake.js";
import { formatIn } from "./occurrences.js";
import {
  isTaskId,
  newTaskId,
  ownerKeyOf,
  type PromptAuthor,
  type ScheduledTask,
  type TaskKind,
  workspaceKeyOf,
} from "./scheduled-task.js";
import { DEFAULT_SCHEDULE_SETTINGS, type ScheduleSettings } from "./schedule-settings.js";
import { type Plan, planTask, type ScheduleArgs } from "./task-planner.js";
import { type RefreshScope, TaskRegistry } from "./task-registry.js";
import { type TaskNotifier, TaskRuns } from "./task-runs.js";
import { creationPreview, describeSchedule, postsIn, refusalPreview, taskLines } from "./task-text.js";
import { limitRefusal } from "./task-limits.js";
import { type ChainRun, WakeChains } from "./wake-chains.js";
import { type NewWakeArgs, WakeLater } from "./wake-later.js";

/** The person's timezone as the platform knows it (Slack users.info tz), if it does. */
export type TimezoneLookup = (target: ThreadTarget, userId: string) => Promise<string | undefined>;

/**
 * What schedule_task hands `create`: the call's arguments and, from the tool, whether a person
 * approved the text (absent: nobody said so, and the text is the agent's own) and the scheduled
 * run that started the calling turn (absent: a person's turn), for the task's place in its chain.
 */
export interface NewTaskArgs extends ScheduleArgs {
  readonly promptBy?: PromptAuthor;
  readonly wokenBy?: ChainRun;
}

/** Who lists or cancels: a person on a platform, from some conversation. */
export interface Actor {
  readonly platform: string;
  readonly userId: string;
  /** The conversation asking (its tasks read "this conversation"). */
  readonly sessionId?: string;
  /**
   * Where the asking conversation is: a cancel's reply names where the task posted only when it
   * may be shown there (task-text.ts shownIn); without it, the reply names it.
   */
  readonly asking?: ThreadTarget;
}

/**
 * What `cancel(actor, id)` would do: end `task` — the actor's own (`own`), else one they may end
 * as an approver — or refuse with `message`.
 */
export type CancelTarget =
  | { readonly ok: true; readonly task: ScheduledTask; readonly own: boolean }
  | { readonly ok: false; readonly message: string };

export interface ScheduleServiceOptions {
  readonly store: Store;
  readonly sessions: WakeableSessions;
  readonly notify: TaskNotifier;
  /** Platform-qualified approver ids ("slack:U0123"): they may cancel anyone's task. */
  readonly approvers?: readonly string[];
  readonly timezoneOf?: TimezoneLookup;
  readonly settings?: ScheduleSettings;
  readonly clock?: Clock;
  /** Names this process in its claims (default: random). */
  readonly owner?: string;
  readonly onError?: (error: unknown, context: string) => void;
  /**
   * Where wake_me_later calls per conversation are counted (store/slot-budget.ts): the app's budget
   * over the 'budgets' space, so every process on the store counts together and a restart keeps
   * the count.
   */
  readonly wakeBudget: SlotBudget;
}

/** Scheduled tasks and wake-ups: creation, listing, cancelling and exactly-once runs. */
export class ScheduleService {
  private readonly runs: TaskRuns;
  private readonly settings: ScheduleSettings;
  private readonly clock: Clock;
  /** wake_me_later's wake-ups, with their per-conversation and chain bounds. */
  private readonly wakes: WakeLater;
  /** How deep in a chain of runs set up with no person asking a wake-up or agent's task is. */
  private readonly chains: WakeChains;
  /** The periodic catalog refresh, from `start` until `shutdown` (see `refreshEvery`). */
  private refresher: PeriodicTask | undefined;

  private constructor(
    private readonly registry: TaskRegistry,
    private readonly options: ScheduleServiceOptions,
  ) {
    this.settings = options.settings ?? DEFAULT_SCHEDULE_SETTINGS;
    this.clock = options.clock ?? systemClock;
    this.chains = new WakeChains(
      options.store.space("schedules"),
      this.settings.maxWakeChain,
      options.onError ?? (() => undefined),
    );
    this.wakes = new WakeLater({
      budget: options.wakeBudget,
      chains: this.chains,
      settings: this.settings,
      clock: this.clock,
      zoneFor: (caller) => this.zoneFor(caller),
      add: (caller, prompt, plan, id) => this.add(caller, "wake", prompt, plan, id),
      onError: options.onError ?? (() => undefined),
    });
    this.runs = new TaskRuns({
      registry,
      space: options.store.space("schedules"),
      owner: options.owner ?? `pid ${process.pid} ${randomBytes(3).toString("hex")}`,
      sessions: options.sessions,
      notify: options.notify,
      settings: this.settings,
      clock: this.clock,
      onError: options.onError ?? (() => undefined),
    });
  }

  /** Load the tasks (they run once `start` is called). */
  static async open(options: ScheduleServiceOptions): Promise<ScheduleService> {
    const onError = options.onError ?? (() => undefined);
    const registry = await TaskRegistry.load(options.store.space("schedules"), onError);
    return new ScheduleService(registry, options);
  }

  /**
   * Arm every stored task (call once the channels can reach their threads); those that fell due
   * while nobody ran them are handled at once.
   */
  start(): void {
    for (const task of this.registry.all()) this.runs.arm(task);
    this.refresher?.stop();
    this.refresher = new PeriodicTask({
      clock: this.clock,
      intervalMs: this.refreshEvery(),
      run: () => this.refresh({}),
      onError: (error) => this.options.onError?.(error, "reading scheduled tasks from the store"),
    });
  }

  /** The approval card's text for schedule_task: where, the next three runs, what runs; or why it will be refused. */
  async preview(caller: Caller, args: ScheduleArgs): Promise<{ summary: string; detail: string }> {
    const plan = await this.planFor(caller, args);
    if (!plan.ok) return refusalPreview(plan.message);
    return creationPreview({
      prompt: args.prompt,
      schedule: plan.schedule,
      target: caller.target,
      zone: plan.zone,
      nowMs: this.clock.now(),
    });
  }

  /**
   * schedule_task: a task in the caller's conversation, run as the caller. Its text counts as the
   * person's only when `args.promptBy` says a person approved it; otherwise it is the agent's own,
   * and the task is a link of the chain of the run that started the calling turn (`args.wokenBy`;
   * wake-chains.ts), refused past the deepest allowed.
   */
  async create(caller: Caller, args: NewTaskArgs): Promise<Outcome> {
    const plan = await this.planFor(caller, args);
    if (!plan.ok) return plan;
    const by = args.promptBy ?? "agent";
    const id = newTaskId("task");
    const add = () => this.add(caller, "task", { text: args.prompt, by }, plan, id);
    // A task a person approved is no link of a chain: its runs start new ones.
    const task =
      by === "person"
        ? await add()
        : await this.chains
            .extend(args.wokenBy, id, plan, this.clock.now(), add)
            .then((linked) => (linked.ok ? linked.made : linked.message));
    if (typeof task === "string") return { ok: false, message: task };
    const next = formatIn(plan.firstMs, plan.zone);
    return {
      ok: true,
      message: `Scheduled task ${task.id}: ${describeSchedule(task.schedule, plan.zone)}, first run ${next}. It runs in this conversation as ${caller.requester.name || caller.requester.id}.`,
    };
  }

  /** wake_me_later: wake this session once with the note, within its bounds (wake-later.ts). */
  wakeLater(caller: Caller, args: NewWakeArgs): Promise<Outcome> {
    return this.wakes.wake(caller, args);
  }

  /**
   * Catch up with the person's tasks other processes on the store created or changed (call before
   * `listFor` / `linesFor`). A store failure is reported to `onError`; the listing is then this
   * process's view.
   */
  async refreshFor(actor: Pick<Actor, "platform" | "userId">): Promise<void> {
    await this.refresh({ owner: `${actor.platform}:${actor.userId}` }).catch((error: unknown) =>
      this.options.onError?.(error, "reading the person's scheduled tasks from the store"),
    );
  }

  /** The person's tasks across all their conversations, oldest first (as `refreshFor` last saw them). */
  listFor(actor: Actor): readonly ScheduledTask[] {
    return this.registry.forOwner(`${actor.platform}:${actor.userId}`);
  }

  /** Listing lines of the person's tasks (for the tool and the `schedules` command). */
  linesFor(actor: Actor): readonly string[] {
    return taskLines(this.listFor(actor), actor.sessionId, this.settings.defaultTimezone);
  }

  /** The session's own tasks, as `status` lines. */
  statusLines(sessionId: string): readonly string[] {
    const mine = this.registry.all().filter((t) => t.sessionId === sessionId);
    return mine.length === 0 ? [] : taskLines(mine, sessionId, this.settings.defaultTimezone);
  }

  /**
   * "new" switched a thread from session `oldId` to `newId`: the tasks and wake-ups set up in
   * `oldId` (the thread's: a session belongs to one thread) are re-pointed to `newId` in the store,
   * each changed as stored now (one cancelled meanwhile stays cancelled), so `status` and the
   * listings find them in the new session. Tasks other processes created are found by a refresh
   * of the catalog first.
   */
  async moveSession(oldId: string, newId: string): Promise<void> {
    await this.refresh({});
    for (const known of this.registry.all().filter((t) => t.sessionId === oldId))
      await this.registry.update(known.id, (task) =>
        task.sessionId === oldId ? { ...task, sessionId: newId } : undefined,
      );
  }

  /**
   * Which task `cancel(actor, id)` ends, or why it refuses; changes nothing. The task its creator
   * may end, or anyone's for an approver; one this process does not know yet (another process
   * created it) is read from the store; an id no task can have is none. The approval card of
   * cancel_scheduled_task asks this, so it cannot name a task the cancel would not end, nor miss one.
   */
  async toCancel(actor: Actor, id: string): Promise<CancelTarget> {
    const wanted = id.trim();
    // Only a task's id is looked up: the store refuses some keys (over 200 characters, a NUL) by throwing.
    const task = isTaskId(wanted)
      ? (this.registry.get(wanted) ?? (await this.registry.reload(wanted)))
      : undefined;
    const own = task !== undefined && ownerKeyOf(task) === `${actor.platform}:${actor.userId}`;
    const approver = mayDecide(this.options.approvers ?? [], actor.platform, actor.userId);
    if (task !== undefined && (own || approver)) return { ok: true, task, own };
    await this.refreshFor(actor);
    const yours =
      this.listFor(actor)
        .map((t) => t.id)
        .join(", ") || "none";
    return { ok: false, message: `You have no scheduled task ${id}. Your tasks: ${yours}.` };
  }

  /** Cancel a task: the one `toCancel` names (its creator's, or anyone's for an approver). */
  async cancel(actor: Actor, id: string): Promise<Outcome> {
    const target = await this.toCancel(actor, id);
    if (!target.ok) return target;
    const { task } = target;
    await this.registry.remove(task.id);
    this.runs.disarm(task.id);
    const where = postsIn(task, actor.sessionId, actor.asking);
    return {
      ok: true,
      message: `Cancelled ${task.kind === "wake" ? "wake-up" : "task"} ${task.id} (posted in ${where}).`,
    };
  }

  /**
   * A scheduled turn ended (its run due `dueAt`, the turn's `scheduledRun.dueAt`): count failed
   * runs in a row; too many pause the task. A task cancelled, paused or run again since is left.
   */
  turnEnded(taskId: string, status: string, dueAt?: string): Promise<void> {
    return this.runs.turnEnded(taskId, status, dueAt);
  }

  /** The bot was removed from a channel: pause the tasks posting there and tell their creators. */
  async channelGone(channel: Pick<ThreadTarget, "platform" | "workspace" | "channel">): Promise<number> {
    await this.refresh({ workspace: workspaceKeyOf(channel) }).catch((error: unknown) =>
      this.options.onError?.(error, "reading the workspace's scheduled tasks from the store"),
    );
    const hit = this.registry
      .all()
      .filter(
        (t) =>
          t.status === "active" &&
          t.target.platform === channel.platform &&
          t.target.workspace === channel.workspace &&
          t.target.channel === channel.channel,
      );
    for (const task of hit) await this.runs.pauseGone(task, "I was removed from its channel");
    return hit.length;
  }

  /** Resolves once the runs started so far (and a periodic refresh under way) have settled. */
  async settled(): Promise<void> {
    await this.refresher?.settled();
    await this.runs.settled();
  }

  /** Stop the timers and wait for runs being handed over. */
  async shutdown(): Promise<void> {
    this.refresher?.stop();
    await this.refresher?.settled();
    await this.runs.shutdown();
  }

  /**
   * How often the catalog is read again: every quarter of the catch-up window (at least a minute),
   * so tasks other processes created are armed here, and one falling due while its creator's
   * process is down still runs (claimed, so once), within the window.
   */
  private refreshEvery(): number {
    return Math.max(60_000, Math.floor(this.settings.catchUpMs / 4));
  }

  /** Whether `start` armed the tasks and no `shutdown` came since (tasks a refresh finds are armed only then). */
  private get started(): boolean {
    return this.refresher?.stopped === false;
  }

  /** The registry's refresh; what it found new or changed is armed, what went away disarmed. */
  private async refresh(scope: RefreshScope): Promise<void> {
    const { changed, removed } = await this.registry.refresh(scope);
    if (!this.started) return;
    for (const task of changed) this.runs.arm(task);
    for (const id of removed) this.runs.disarm(id);
  }

  private async zoneFor(caller: Caller): Promise<string> {
    const own = await this.options.timezoneOf?.(caller.target, caller.requester.id).catch(() => undefined);
    return own ?? this.settings.defaultTimezone;
  }

  private async planFor(caller: Caller, args: ScheduleArgs): Promise<Plan> {
    return planTask(args, await this.zoneFor(caller), this.clock.now(), this.settings);
  }

  /**
   * Store and arm a new task after the per-person and per-workspace limits (task-limits.ts); a
   * refusal as text.
   */
  private async add(
    caller: Caller,
    kind: TaskKind,
    prompt: { readonly text: string; readonly by: PromptAuthor },
    plan: Plan & { ok: true },
    id: string = newTaskId(kind),
  ): Promise<ScheduledTask | string> {
    const owner = `${caller.target.platform}:${caller.requester.id}`;
    const workspace = workspaceKeyOf(caller.target);
    // Other processes' tasks count too (a store failure fails the create, as its write would).
    await this.refresh({ owner, workspace });
    const refusal = limitRefusal(this.registry, this.settings, owner, workspace);
    if (refusal !== undefined) return refusal;
    const task = await this.registry.put({
      id,
      kind,
      sessionId: caller.sessionId,
      target: caller.target,
      createdBy: caller.requester,
      prompt: prompt.text,
      promptBy: prompt.by,
      schedule: plan.schedule,
      status: "active",
      createdAt: new Date(this.clock.now()).toISOString(),
      nextRunAt: new Date(plan.firstMs).toISOString(),
      runs: 0,
      failures: 0,
    });
    this.runs.arm(task);
    return task;
  }
}
