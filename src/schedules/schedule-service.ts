/**
 * ScheduleService: scheduled tasks and wake-ups, durable and exactly-once. Tools call `preview` /
 * `create` / `wakeLater` / `listFor` / `cancel`; the session layer reports how each scheduled turn
 * ended (`turnEnded`). Tasks live in the store (TaskRegistry); one DueQueue timer waits for the
 * earliest. When a task is due its occurrence is claimed in the store first (OccurrenceClaims), so
 * a restart, a kill -9 or another process on the same store never runs it twice; a run that was
 * missed while the service was down runs once at start when within the catch-up window, else it
 * is skipped with a note. A run is a wake turn of the task's session (queued behind a running
 * turn) as its creator. Guards: the planner's minimum interval, active tasks per person and per
 * workspace, wake-ups per session per hour, and failed runs in a row pause a task.
 */
import { randomBytes } from "node:crypto";
import { mayDecide } from "../approvals/authorisation.js";
import type { ThreadTarget } from "../core/thread-target.js";
import type { Store } from "../store/store.js";
import type { Caller, Outcome } from "../subscriptions/channel-access.js";
import { type Clock, systemClock } from "../subscriptions/clock.js";
import type { WakeableSessions } from "../subscriptions/session-wake.js";
import { DueQueue } from "./due-queue.js";
import { OccurrenceClaims } from "./occurrence-claims.js";
import { formatIn, missedOccurrences, nextOccurrence } from "./occurrences.js";
import {
  newTaskId,
  ownerKeyOf,
  type ScheduledTask,
  type TaskKind,
  workspaceKeyOf,
} from "./scheduled-task.js";
import { DEFAULT_SCHEDULE_SETTINGS, type ScheduleSettings } from "./schedule-settings.js";
import { type Plan, planTask, planWake, type ScheduleArgs, type WakeArgs } from "./task-planner.js";
import { TaskRegistry } from "./task-registry.js";
import { creationPreview, describeSchedule, runInput, taskLines, zoneOf } from "./task-text.js";
import { HourlyWindow } from "../subscriptions/hourly-window.js";
import { placeOf } from "../subscriptions/subscription-text.js";

/** Posts a short notice into a thread (the creator's DM included). */
export type TaskNotifier = (target: ThreadTarget, text: string) => Promise<void>;

/** The person's timezone as the platform knows it (Slack users.info tz), if it does. */
export type TimezoneLookup = (target: ThreadTarget, userId: string) => Promise<string | undefined>;

/** Who lists or cancels: a person on a platform, from some conversation. */
export interface Actor {
  readonly platform: string;
  readonly userId: string;
  /** The conversation asking (its tasks read "this conversation"). */
  readonly sessionId?: string;
}

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
}

/** Scheduled tasks and wake-ups: creation, listing, cancelling and exactly-once runs. */
export class ScheduleService {
  private readonly queue: DueQueue;
  private readonly claims: OccurrenceClaims;
  private readonly settings: ScheduleSettings;
  private readonly clock: Clock;
  private readonly onError: (error: unknown, context: string) => void;
  /** wake_me_later calls per session in the last hour (the per-session limit). */
  private readonly wakesBySession = new HourlyWindow();
  private readonly inFlight = new Set<Promise<void>>();
  private closed = false;

  private constructor(
    private readonly registry: TaskRegistry,
    private readonly options: ScheduleServiceOptions,
  ) {
    this.settings = options.settings ?? DEFAULT_SCHEDULE_SETTINGS;
    this.clock = options.clock ?? systemClock;
    this.onError = options.onError ?? (() => undefined);
    this.claims = new OccurrenceClaims(
      options.store.space("schedules"),
      options.owner ?? `pid ${process.pid} ${randomBytes(3).toString("hex")}`,
      this.settings.catchUpMs,
    );
    this.queue = new DueQueue(this.clock, (ids) => {
      for (const id of ids) this.track(this.process(id));
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
    for (const task of this.registry.all()) this.arm(task);
  }

  /** The approval card's text for schedule_task: what runs, where, the next three runs. */
  async preview(caller: Caller, args: ScheduleArgs): Promise<{ summary: string; detail: string }> {
    const plan = await this.planFor(caller, args);
    if (!plan.ok)
      return { summary: `schedule a task (will be refused: ${plan.message})`, detail: plan.message };
    return creationPreview({
      prompt: args.prompt,
      schedule: plan.schedule,
      target: caller.target,
      zone: plan.zone,
      nowMs: this.clock.now(),
    });
  }

  /** schedule_task: a task in the caller's conversation, run as the caller. */
  async create(caller: Caller, args: ScheduleArgs): Promise<Outcome> {
    const plan = await this.planFor(caller, args);
    if (!plan.ok) return plan;
    const task = await this.add(caller, "task", args.prompt, plan);
    if (typeof task === "string") return { ok: false, message: task };
    const next = formatIn(plan.firstMs, plan.zone);
    return {
      ok: true,
      message: `Scheduled task ${task.id}: ${describeSchedule(task.schedule, plan.zone)}, first run ${next}. It runs in this conversation as ${caller.requester.name || caller.requester.id}.`,
    };
  }

  /** wake_me_later: wake this session once with the note (bounded, rate-limited per session). */
  async wakeLater(caller: Caller, args: WakeArgs): Promise<Outcome> {
    const now = this.clock.now();
    const recent = this.wakesBySession.recent(caller.sessionId, now);
    if (recent.length >= this.settings.wakesPerSessionPerHour)
      return {
        ok: false,
        message: `This conversation set ${recent.length} wake-ups in the last hour, the most allowed; try again later.`,
      };
    const plan = planWake(args, await this.zoneFor(caller), now, this.settings);
    if (!plan.ok) return plan;
    const task = await this.add(caller, "wake", args.note, plan);
    if (typeof task === "string") return { ok: false, message: task };
    this.wakesBySession.add(caller.sessionId, now);
    return {
      ok: true,
      message: `I will wake this conversation at ${formatIn(plan.firstMs, plan.zone)} (${task.id}).`,
    };
  }

  /** The person's tasks across all their conversations, oldest first. */
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

  /** Cancel a task: its creator's, or anyone's for an approver. */
  async cancel(actor: Actor, id: string): Promise<Outcome> {
    const task = this.registry.get(id.trim()) ?? (await this.registry.reload(id.trim()));
    const owner = task !== undefined && ownerKeyOf(task) === `${actor.platform}:${actor.userId}`;
    const approver = mayDecide(this.options.approvers ?? [], actor.platform, actor.userId);
    if (!task || !(owner || approver)) {
      const yours =
        this.listFor(actor)
          .map((t) => t.id)
          .join(", ") || "none";
      return { ok: false, message: `You have no scheduled task ${id}. Your tasks: ${yours}.` };
    }
    await this.registry.remove(task.id);
    this.queue.delete(task.id);
    const where = task.sessionId === actor.sessionId ? "this conversation" : placeOf(task.target);
    return {
      ok: true,
      message: `Cancelled ${task.kind === "wake" ? "wake-up" : "task"} ${task.id} (posted in ${where}).`,
    };
  }

  /** A scheduled turn ended: count failed runs in a row; too many pause the task. */
  async turnEnded(taskId: string, status: string): Promise<void> {
    const task = this.registry.get(taskId);
    if (!task) return;
    if (status === "completed") {
      await this.registry.put({ ...task, failures: 0, lastResult: "completed" });
      return;
    }
    await this.failed(task, `the run ended: ${status}`);
  }

  /** The bot was removed from a channel: pause the tasks posting there and tell their creators. */
  async channelGone(channel: Pick<ThreadTarget, "platform" | "workspace" | "channel">): Promise<number> {
    const hit = this.registry
      .all()
      .filter(
        (t) =>
          t.status === "active" &&
          t.target.platform === channel.platform &&
          t.target.workspace === channel.workspace &&
          t.target.channel === channel.channel,
      );
    for (const task of hit) await this.pauseGone(task, "I was removed from its channel");
    return hit.length;
  }

  /** Resolves once the runs started so far have been handed to the session layer. */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Stop the timer and wait for runs being handed over. */
  async shutdown(): Promise<void> {
    this.closed = true;
    this.queue.close();
    await this.settled();
  }

  private async zoneFor(caller: Caller): Promise<string> {
    const own = await this.options.timezoneOf?.(caller.target, caller.requester.id).catch(() => undefined);
    return own ?? this.settings.defaultTimezone;
  }

  private async planFor(caller: Caller, args: ScheduleArgs): Promise<Plan> {
    return planTask(args, await this.zoneFor(caller), this.clock.now(), this.settings);
  }

  /** Store a new task after the per-person and per-workspace guards; a refusal as text. */
  private async add(caller: Caller, kind: TaskKind, prompt: string, plan: Plan & { ok: true }) {
    const owner = `${caller.target.platform}:${caller.requester.id}`;
    if (this.registry.activeForOwner(owner) >= this.settings.maxActivePerPerson)
      return `You already have ${this.settings.maxActivePerPerson} active scheduled tasks, the most allowed; cancel one first (list_scheduled_tasks shows them).`;
    if (this.registry.activeInWorkspace(workspaceKeyOf(caller.target)) >= this.settings.maxActivePerWorkspace)
      return `This workspace has ${this.settings.maxActivePerWorkspace} active scheduled tasks, the most allowed.`;
    const task = await this.registry.put({
      id: newTaskId(kind),
      kind,
      sessionId: caller.sessionId,
      target: caller.target,
      createdBy: caller.requester,
      prompt,
      schedule: plan.schedule,
      status: "active",
      createdAt: new Date(this.clock.now()).toISOString(),
      nextRunAt: new Date(plan.firstMs).toISOString(),
      runs: 0,
      failures: 0,
    });
    this.arm(task);
    return task;
  }

  private arm(task: ScheduledTask): void {
    if (task.status === "active" && task.nextRunAt !== undefined)
      this.queue.set(task.id, Date.parse(task.nextRunAt));
    else this.queue.delete(task.id);
  }

  private track(work: Promise<void>): void {
    const tracked = work.finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
  }

  /** A task fell due: claim the occurrence, then run it (or skip it, too late) exactly once. */
  private async process(id: string): Promise<void> {
    try {
      const known = this.registry.get(id);
      if (!known?.nextRunAt || known.status !== "active" || this.closed) return;
      const now = this.clock.now();
      const missed = missedOccurrences(known.schedule, Date.parse(known.nextRunAt), now, known.runs);
      if (!missed) return this.arm(known);
      if (!(await this.claims.claim(id, missed.latest, now))) return await this.lostClaim(id, missed.latest);
      const task = await this.registry.reload(id);
      if (task?.status !== "active") return this.queue.delete(id);
      const late = now - missed.latest > this.settings.catchUpMs;
      const runs = late ? task.runs : task.runs + 1;
      const next = nextOccurrence(task.schedule, Math.max(missed.latest, now), runs);
      const advanced: ScheduledTask = {
        ...task,
        runs,
        ...(late
          ? { lastResult: "skipped (missed while the service was down)" }
          : { lastRunAt: new Date(missed.latest).toISOString(), lastResult: "started" }),
        ...(next === undefined ? { nextRunAt: undefined } : { nextRunAt: new Date(next).toISOString() }),
      };
      if (next === undefined && !late) await this.registry.remove(id);
      else this.arm(await this.registry.put(withoutUndefined(advanced)));
      if (late) return await this.skipped(advanced, missed.latest, next);
      await this.run(task, advanced, missed.latest, missed.earlier, next === undefined);
    } catch (error) {
      this.onError(error, `running scheduled task ${id}`);
    }
  }

  /** Another process (or this one before a restart) has this occurrence: follow the stored task. */
  private async lostClaim(id: string, dueMs: number): Promise<void> {
    const task = await this.registry.reload(id);
    if (task?.status !== "active") return this.queue.delete(id);
    const stored = task.nextRunAt === undefined ? undefined : Date.parse(task.nextRunAt);
    const next =
      stored !== undefined && stored > dueMs ? stored : nextOccurrence(task.schedule, dueMs, task.runs + 1);
    if (next === undefined) this.queue.delete(id);
    else this.queue.set(id, next);
  }

  private async run(
    task: ScheduledTask,
    advanced: ScheduledTask,
    dueMs: number,
    skipped: number,
    last: boolean,
  ): Promise<void> {
    const prompt = runInput({ task, dueMs, skipped, fallbackZone: this.settings.defaultTimezone });
    let result: Awaited<ReturnType<WakeableSessions["wake"]>>;
    try {
      result = await this.options.sessions.wake({
        sessionId: task.sessionId,
        target: task.target,
        prompt,
        requester: task.createdBy,
        scheduledRun: { taskId: task.id, dueAt: new Date(dueMs).toISOString() },
      });
    } catch (error) {
      this.onError(error, `handing scheduled task ${task.id} to its session`);
      if (!last) await this.failed(advanced, "the run could not start");
      return;
    }
    if (result.status === "gone") await this.pauseGone(advanced, result.reason);
    else if (result.status === "skipped") await this.notStarted(advanced, result.reason);
  }

  /** The run was left out (its previous one still waits): noted on the task, no failure counted. */
  private async notStarted(task: ScheduledTask, reason: string): Promise<void> {
    const current = await this.registry.reload(task.id);
    if (current?.status !== "active") return;
    this.arm(await this.registry.put({ ...current, lastResult: `skipped: ${reason}` }));
  }

  private async skipped(task: ScheduledTask, dueMs: number, next: number | undefined): Promise<void> {
    const zone = zoneOf(task.schedule, this.settings.defaultTimezone);
    const window = Math.round(this.settings.catchUpMs / 60_000);
    const then = next === undefined ? "It has no further runs." : `Next run: ${formatIn(next, zone)}.`;
    await this.tell(
      task.target,
      `Task ${task.id} was due ${formatIn(dueMs, zone)} while I was not running — more than ${window} min ago, so I skipped that run. ${then}`,
    );
    if (next === undefined) await this.registry.remove(task.id);
  }

  private async failed(task: ScheduledTask, why: string): Promise<void> {
    const failures = task.failures + 1;
    const pause = failures >= this.settings.maxFailures;
    const updated = await this.registry.put({
      ...task,
      failures,
      lastResult: why,
      ...(pause ? { status: "paused" as const, statusNote: `${failures} failed runs in a row` } : {}),
    });
    this.arm(updated);
    if (pause)
      await this.tell(
        task.target,
        `Task ${task.id} failed ${failures} times in a row (${why}), so I paused it. Cancel it with cancel_scheduled_task or ask me to set it up again.`,
      );
  }

  /** The task's thread is gone: pause it and tell its creator in a direct message. */
  private async pauseGone(task: ScheduledTask, reason: string): Promise<void> {
    const paused = await this.registry.put({
      ...task,
      status: "paused",
      statusNote: `its thread is gone: ${reason}`,
    });
    this.arm(paused);
    const dm: ThreadTarget = {
      platform: task.target.platform,
      workspace: task.target.workspace,
      channel: task.createdBy.id,
    };
    await this.tell(
      dm,
      `I paused your scheduled ${task.kind === "wake" ? "wake-up" : "task"} ${task.id} ("${task.prompt.slice(0, 80)}"): the conversation it posts in (${placeOf(task.target)}) is gone — ${reason}. Cancel it with \`cancel_scheduled_task\` or set it up again somewhere else.`,
    );
  }

  private async tell(target: ThreadTarget, text: string): Promise<void> {
    await this.options
      .notify(target, text)
      .catch((error: unknown) => this.onError(error, `posting to ${placeOf(target)}`));
  }
}

/** A record without its undefined fields (stored records omit absent optionals). */
function withoutUndefined<T extends object>(record: T): T {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)) as T;
}
