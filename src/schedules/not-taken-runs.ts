/**
 * NotTakenRuns: what happens to a run the session layer could not take now (the platform not
 * connected yet, shutting down, the thread being switched). That is no failed run: unless the
 * task changed since, it is put back as it was before the run, its claim given back and the run
 * tried again a minute later — here, or at the next start. Since when no run of the task was
 * taken is kept on it (`notTakenSince`, across occurrences and restarts), so once a whole
 * catch-up window has passed with none taken the task is paused and its creator told, once —
 * a frequent task's retries do not go on for ever. Apart from TaskRuns because this retry and
 * give-up policy is its own concern; TaskRuns hands it the runs that were not taken.
 */
import type { ThreadTarget } from "../core/thread-target.js";
import type { Clock } from "../core/clock.js";
import type { OccurrenceClaims } from "./occurrence-claims.js";
import { formatIn } from "./occurrences.js";
import { type ScheduledTask, unchanged, withoutUndefined } from "./scheduled-task.js";
import type { ScheduleSettings } from "./schedule-settings.js";
import type { TaskRegistry } from "./task-registry.js";
import { clipResult, dmOf, kindOf, noticeExcerpt, zoneOf } from "./task-text.js";

/** How long after a run the session layer could not take it is tried again. */
export const RETRY_MS = 60_000;

export interface NotTakenRunsOptions {
  readonly registry: TaskRegistry;
  readonly claims: OccurrenceClaims;
  readonly settings: ScheduleSettings;
  readonly clock: Clock;
  /** Arm the task as this process last read it (or forget it when gone). */
  readonly armStored: (id: string) => void;
  /** Wait for the task again at `atMs` (a retry), unless shutting down. */
  readonly retryAt: (id: string, atMs: number) => void;
  /** Post a notice, errors reported, never thrown. */
  readonly tell: (target: ThreadTarget, text: string) => Promise<void>;
}

/** Puts back, retries, or gives up on runs the session layer could not take. */
export class NotTakenRuns {
  constructor(private readonly options: NotTakenRunsOptions) {}

  /**
   * The session layer could not take the run due `dueMs` now: no failed run. Unless the task
   * changed since (`stored` is what this run left in the store), it is put back as it was before
   * the run (`before`), its claim given back and the run tried again in RETRY_MS — noting since
   * when no run of it was taken (`notTakenSince`, kept across occurrences and restarts). When the
   * retry would come a catch-up window or more after that, the task is paused and its creator told.
   */
  async notTaken(
    before: ScheduledTask,
    stored: ScheduledTask,
    dueMs: number,
    last: boolean,
    reason: string,
  ): Promise<void> {
    const { registry, claims, settings, clock } = this.options;
    const since =
      before.notTakenSince === undefined ? dueMs : Math.min(dueMs, Date.parse(before.notTakenSince));
    const retryAt = clock.now() + RETRY_MS;
    if (retryAt - since > settings.catchUpMs) return await this.gaveUp(stored, since, last, reason);
    const restored = await registry.update(before.id, (current) =>
      unchanged(current, stored)
        ? withoutUndefined({
            ...current,
            runs: before.runs,
            lastRunAt: before.lastRunAt,
            nextRunAt: before.nextRunAt,
            lastResult: clipResult(`not started, trying again: ${reason}`),
            notTakenSince: new Date(since).toISOString(),
          })
        : undefined,
    );
    if (!restored) return this.options.armStored(before.id);
    await claims.release(before.id, dueMs);
    this.options.retryAt(before.id, retryAt);
  }

  /**
   * No run of the task (the first due `sinceMs`) could be handed over within the catch-up window:
   * pause it — a repeating one too, whose retries would otherwise move on to each next run and go
   * on for ever — and tell its creator, once.
   */
  private async gaveUp(stored: ScheduledTask, sinceMs: number, last: boolean, reason: string): Promise<void> {
    const { registry, settings } = this.options;
    const note = clipResult(`not started: ${reason}`);
    const window = Math.round(settings.catchUpMs / 60_000);
    const updated = await registry.update(stored.id, (current) =>
      unchanged(current, stored)
        ? withoutUndefined({
            ...current,
            status: "paused" as const,
            statusNote: note,
            lastResult: clipResult(`paused, no run started in ${window} min: ${reason}`),
            notTakenSince: undefined,
          })
        : undefined,
    );
    this.options.armStored(stored.id);
    if (!updated) return;
    const zone = zoneOf(updated.schedule, settings.defaultTimezone);
    const due = `due ${formatIn(sinceMs, zone)}${last ? "" : " nor any run since"}`;
    await this.options.tell(
      dmOf(updated),
      `I could not start your scheduled ${kindOf(updated)} ${updated.id} ("${noticeExcerpt(updated)}") ${due}, and stopped trying after ${window} min: ${reason}. I paused it; cancel it with \`cancel_scheduled_task\` or set it up again.`,
    );
  }
}
