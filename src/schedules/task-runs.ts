/**
 * TaskRuns: a scheduled task's runs, exactly once. One DueQueue timer waits for the earliest
 * active task. When a task is due its occurrence is claimed in the store first (OccurrenceClaims),
 * so a restart, a kill -9 or another process on the same store never runs it twice; a run that was
 * missed while the service was down runs once at start when within the catch-up window, else it is
 * skipped with a note. A run is a wake turn of the task's session (queued behind a running turn) as
 * its creator, marked as the agent's own note when the task's text is the agent's (a wake-up, a
 * task no person approved); failed runs in a row, and a thread that is gone, pause the task and
 * tell its creator; a creator who may no longer use the bot there pauses it too, and the thread is
 * told.
 */
import type { ThreadTarget } from "../core/thread-target.js";
import type { KeyValueSpace } from "../store/store.js";
import type { Clock } from "../subscriptions/clock.js";
import type { WakeableSessions } from "../subscriptions/session-wake.js";
import { placeOf } from "../subscriptions/subscription-text.js";
import { DueQueue } from "./due-queue.js";
import { OccurrenceClaims } from "./occurrence-claims.js";
import { formatIn, missedOccurrences, nextOccurrence } from "./occurrences.js";
import type { ScheduledTask } from "./scheduled-task.js";
import type { ScheduleSettings } from "./schedule-settings.js";
import type { TaskRegistry } from "./task-registry.js";
import { runInput, zoneOf } from "./task-text.js";

/** Posts a short notice into a thread (the creator's DM included). */
export type TaskNotifier = (target: ThreadTarget, text: string) => Promise<void>;

export interface TaskRunsOptions {
  readonly registry: TaskRegistry;
  /** The "schedules" space, where occurrences are claimed. */
  readonly space: KeyValueSpace;
  /** Names this process in its claims. */
  readonly owner: string;
  readonly sessions: WakeableSessions;
  readonly notify: TaskNotifier;
  readonly settings: ScheduleSettings;
  readonly clock: Clock;
  readonly onError: (error: unknown, context: string) => void;
}

/** Arms the active tasks, and runs (or skips) each due occurrence once. */
export class TaskRuns {
  private readonly registry: TaskRegistry;
  private readonly queue: DueQueue;
  private readonly claims: OccurrenceClaims;
  private readonly settings: ScheduleSettings;
  private readonly clock: Clock;
  private readonly onError: (error: unknown, context: string) => void;
  private readonly inFlight = new Set<Promise<void>>();
  private closed = false;

  constructor(private readonly options: TaskRunsOptions) {
    this.registry = options.registry;
    this.settings = options.settings;
    this.clock = options.clock;
    this.onError = options.onError;
    this.claims = new OccurrenceClaims(options.space, options.owner, this.settings.catchUpMs);
    this.queue = new DueQueue(this.clock, (ids) => {
      for (const id of ids) this.track(this.process(id));
    });
  }

  /** Arm the task: wait for its next run when it is active, else forget it. */
  arm(task: ScheduledTask): void {
    if (task.status === "active" && task.nextRunAt !== undefined)
      this.queue.set(task.id, Date.parse(task.nextRunAt));
    else this.queue.delete(task.id);
  }

  /** Stop waiting for a removed task. */
  disarm(id: string): void {
    this.queue.delete(id);
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

  /** The task's thread is gone: pause it and tell its creator in a direct message. */
  async pauseGone(task: ScheduledTask, reason: string): Promise<void> {
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

  /**
   * The task's creator may no longer use the bot where it runs (WakeResult "refused"): pause it —
   * its runs would act with their authority — and say so in the thread it posts in, not to them.
   */
  private async pauseRefused(task: ScheduledTask, reason: string): Promise<void> {
    this.arm(await this.registry.put({ ...task, status: "paused", statusNote: reason }));
    await this.tell(
      task.target,
      `I paused the scheduled ${task.kind === "wake" ? "wake-up" : "task"} ${task.id}, which runs as the person who set it up: ${reason}.`,
    );
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
        ...(task.promptBy === "person" ? {} : { agentNote: true }),
      });
    } catch (error) {
      this.onError(error, `handing scheduled task ${task.id} to its session`);
      if (!last) await this.failed(advanced, "the run could not start");
      return;
    }
    if (result.status === "gone") await this.pauseGone(advanced, result.reason);
    else if (result.status === "refused") await this.pauseRefused(advanced, result.reason);
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
