/**
 * TaskRuns: a scheduled task's runs, exactly once. One DueQueue timer waits for the earliest
 * active task. When a task is due its occurrence is claimed in the store first (OccurrenceClaims),
 * so a restart, a kill -9 or another process on the same store never runs it twice; a run that was
 * missed while the service was down runs once at start when within the catch-up window, else it is
 * skipped with a note. A run is a wake turn of the task's session (queued behind a running turn) as
 * its creator, marked as the agent's own note when the task's text is the agent's (a wake-up, a
 * task no person approved); failed runs in a row, and a thread that is gone, pause the task and
 * tell its creator; a creator who may no longer use the bot there pauses it too, and the thread is
 * told. A repeating task is advanced before its run is handed over — as stored now, and only
 * while it still waits for that run, so one cancelled or paused meanwhile is neither written back
 * nor run (its claim is given back) — a one-off removed only once the session layer took its run.
 * A run the session layer cannot take now is no failed run: NotTakenRuns (not-taken-runs.ts)
 * puts the task back and retries it, and pauses it once a catch-up window passed with none taken.
 * Results (a turn's end, a pause) are written on the task as stored now (TaskRegistry.update),
 * never on this process's copy, so a task cancelled or paused elsewhere stays so.
 */
import { clip } from "../core/surrogate-pairs.js";
import type { ThreadTarget } from "../core/thread-target.js";
import type { KeyValueSpace } from "../store/store.js";
import type { Clock } from "../core/clock.js";
import type { WakeableSessions } from "../subscriptions/session-wake.js";
import { placeOf } from "../subscriptions/subscription-text.js";
import { DueQueue } from "./due-queue.js";
import { NotTakenRuns, RETRY_MS } from "./not-taken-runs.js";
import { OccurrenceClaims } from "./occurrence-claims.js";
import { formatIn, type Missed, missedOccurrences, nextOccurrence } from "./occurrences.js";
import { type ScheduledTask, unchanged, withoutUndefined } from "./scheduled-task.js";
import type { ScheduleSettings } from "./schedule-settings.js";
import type { TaskRegistry } from "./task-registry.js";
import { clipResult, dmOf, kindOf, noticeExcerpt, runInput, zoneOf } from "./task-text.js";

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
  private readonly notTaken: NotTakenRuns;
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
    this.notTaken = new NotTakenRuns({
      registry: this.registry,
      claims: this.claims,
      settings: this.settings,
      clock: this.clock,
      armStored: (id) => this.armStored(id),
      retryAt: (id, atMs) => {
        if (!this.closed) this.queue.set(id, atMs);
      },
      tell: (target, text) => this.tell(target, text),
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

  /**
   * A scheduled turn ended — the run due `dueAt`, when the session layer says which: count failed
   * runs in a row; too many pause the task. Written on the task as stored now: one gone, paused,
   * or whose latest run is no longer `dueAt` is left as it is.
   */
  async turnEnded(taskId: string, status: string, dueAt?: string): Promise<void> {
    const why = `the run ended: ${status}`;
    const updated = await this.registry.update(taskId, (current) => {
      if (current.status !== "active") return undefined;
      if (dueAt !== undefined && !sameTime(current.lastRunAt, dueAt)) return undefined;
      if (status === "completed") return { ...current, failures: 0, lastResult: "completed" };
      const failures = current.failures + 1;
      if (failures < this.settings.maxFailures) return { ...current, failures, lastResult: why };
      return {
        ...current,
        failures,
        lastResult: why,
        status: "paused",
        statusNote: `${failures} failed runs in a row`,
      };
    });
    this.armStored(taskId);
    if (updated?.status === "paused")
      await this.tell(
        updated.target,
        `Task ${updated.id} failed ${updated.failures} times in a row (${why}), so I paused it. Cancel it with cancel_scheduled_task or ask me to set it up again.`,
      );
  }

  /** The task's thread is gone: pause it (when still active) and tell its creator in a direct message. */
  async pauseGone(task: ScheduledTask, reason: string): Promise<void> {
    const paused = await this.pause(task.id, `its thread is gone: ${reason}`);
    if (!paused) return;
    await this.tell(
      dmOf(paused),
      `I paused your scheduled ${kindOf(paused)} ${paused.id} ("${noticeExcerpt(paused)}"): the conversation it posts in (${placeOf(paused.target)}) is gone — ${reason}. Cancel it with \`cancel_scheduled_task\` or set it up again somewhere else.`,
    );
  }

  /**
   * The task's creator may no longer use the bot where it runs (WakeResult "refused"): pause it —
   * its runs would act with their authority — and say so in the thread it posts in, not to them.
   */
  private async pauseRefused(task: ScheduledTask, reason: string): Promise<void> {
    const paused = await this.pause(task.id, reason);
    if (!paused) return;
    await this.tell(
      paused.target,
      `I paused the scheduled ${kindOf(paused)} ${paused.id}, which runs as the person who set it up: ${reason}.`,
    );
  }

  /** Pause the task as stored now, when it is still active; what was written. */
  private async pause(id: string, note: string): Promise<ScheduledTask | undefined> {
    const paused = await this.registry.update(id, (current) =>
      current.status === "active" ? { ...current, status: "paused", statusNote: note } : undefined,
    );
    this.armStored(id);
    return paused;
  }

  /** Arm the task as this process last read it, or forget it when it is gone. */
  private armStored(id: string): void {
    const task = this.registry.get(id);
    if (task) this.arm(task);
    else this.queue.delete(id);
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
      if (!(await this.claims.claim(id, missed.latest, now)))
        return await this.lostClaim(id, missed.latest, now);
      const task = await this.registry.reload(id);
      if (task?.status !== "active") return this.queue.delete(id);
      const late = now - missed.latest > this.settings.catchUpMs;
      const runs = late ? task.runs : task.runs + 1;
      const next = nextOccurrence(task.schedule, Math.max(missed.latest, now), runs);
      // A one-off stays as stored until the session layer has taken its run.
      if (!late && next === undefined) return await this.run(task, task, missed, true);
      // Moved on as stored now, only while it still waits for this run (a cancel stays a cancel).
      let before = task;
      const advanced = await this.registry.update(id, (current) => {
        if (!unchanged(current, task)) return undefined;
        before = current;
        return withoutUndefined({
          ...current,
          runs,
          ...(late
            ? { lastResult: "skipped (missed while the service was down)" }
            : {
                lastRunAt: new Date(missed.latest).toISOString(),
                lastResult: "started",
                notTakenSince: undefined,
              }),
          nextRunAt: next === undefined ? undefined : new Date(next).toISOString(),
        });
      });
      if (!advanced) return await this.dropped(id, missed.latest);
      this.arm(advanced);
      if (late) return await this.skipped(advanced, missed.latest, next);
      await this.run(before, advanced, missed, false);
    } catch (error) {
      this.onError(error, `running scheduled task ${id}`);
    }
  }

  /** The task was cancelled, paused or moved on while its run due `dueMs` was starting: give the claim back. */
  private async dropped(id: string, dueMs: number): Promise<void> {
    await this.claims.release(id, dueMs);
    this.armStored(id);
  }

  /**
   * Another process (or this one before a restart) has this occurrence: follow the stored task —
   * its next run once the claimer moved it on, else a look again a minute later (see below).
   */
  private async lostClaim(id: string, dueMs: number, now: number): Promise<void> {
    const task = await this.registry.reload(id);
    if (task?.status !== "active") return this.queue.delete(id);
    const stored = task.nextRunAt === undefined ? undefined : Date.parse(task.nextRunAt);
    // Not moved past this occurrence: its claimer is still handing it over, or gave it back
    // (the session layer could not take it): look again shortly, while within the window.
    if (stored !== undefined && stored <= dueMs && now + RETRY_MS - dueMs <= this.settings.catchUpMs)
      return this.queue.set(id, now + RETRY_MS);
    const next =
      stored !== undefined && stored > dueMs ? stored : nextOccurrence(task.schedule, dueMs, task.runs + 1);
    if (next === undefined) this.queue.delete(id);
    else this.queue.set(id, next);
  }

  /**
   * Hand the run due `missed.latest` of `task` (as it was before the run) to the session layer;
   * `stored` is what the run left in the store (`task` itself for a one-off's `last` run).
   */
  private async run(
    task: ScheduledTask,
    stored: ScheduledTask,
    missed: Missed,
    last: boolean,
  ): Promise<void> {
    const dueMs = missed.latest;
    const prompt = runInput({
      task,
      dueMs,
      skipped: missed.earlier,
      fallbackZone: this.settings.defaultTimezone,
    });
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
      await this.notTaken.notTaken(task, stored, dueMs, last, errorText(error));
      return;
    }
    if (result.status === "gone") await this.pauseGone(task, result.reason);
    else if (result.status === "refused") await this.pauseRefused(task, result.reason);
    else if (last) await this.registry.remove(task.id);
    else if (result.status === "skipped") await this.notStarted(task.id, result.reason);
  }

  /** The run was left out (its previous one still waits): noted on the task, no failure counted. */
  private async notStarted(id: string, reason: string): Promise<void> {
    await this.registry.update(id, (current) =>
      current.status === "active" ? { ...current, lastResult: clipResult(`skipped: ${reason}`) } : undefined,
    );
    this.armStored(id);
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

  private async tell(target: ThreadTarget, text: string): Promise<void> {
    await this.options
      .notify(target, text)
      .catch((error: unknown) => this.onError(error, `posting to ${placeOf(target)}`));
  }
}

/** Whether two ISO times (either maybe absent) name the same instant. */
function sameTime(a: string | undefined, b: string): boolean {
  return a !== undefined && Date.parse(a) === Date.parse(b);
}

/** An error as one short line. */
function errorText(error: unknown): string {
  return clip(error instanceof Error ? error.message : String(error), 160);
}
