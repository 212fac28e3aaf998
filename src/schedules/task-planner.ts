/**
 * Task planner: turns the arguments of schedule_task and wake_me_later into a validated schedule,
 * or says what is wrong — exactly one of `at` / `cron`, a future time, a known timezone, a cron
 * expression croner accepts, runs no closer together than the minimum interval, and (for
 * wake-ups) a time no nearer than the shortest and no further than the longest allowed wait. Pure apart from the clock value passed in.
 */
import { cronProblem, isKnownTimezone, nextOccurrence, shortestGap } from "./occurrences.js";
import type { TaskSchedule } from "./scheduled-task.js";
import type { ScheduleSettings } from "./schedule-settings.js";

/** schedule_task's scheduling arguments. */
export interface ScheduleArgs {
  readonly prompt: string;
  readonly at?: string | undefined;
  readonly cron?: string | undefined;
  readonly timezone?: string | undefined;
  readonly until?: string | undefined;
  readonly max_runs?: number | undefined;
}

/** wake_me_later's arguments. */
export interface WakeArgs {
  readonly note: string;
  readonly in_s?: number | undefined;
  readonly at?: string | undefined;
}

/** A usable schedule with its first due time, or the reason there is none. */
export type Plan =
  | { readonly ok: true; readonly schedule: TaskSchedule; readonly firstMs: number; readonly zone: string }
  | { readonly ok: false; readonly message: string };

/** An ISO time with a date, a time and an offset (or Z), as epoch ms; undefined otherwise. */
function parseTime(text: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i.test(text.trim()))
    return undefined;
  const ms = Date.parse(text.trim());
  return Number.isFinite(ms) ? ms : undefined;
}

const refuse = (message: string): Plan => ({ ok: false, message });

function minutes(ms: number): string {
  const s = Math.round(ms / 1_000);
  return s % 60 === 0 ? `${s / 60} min` : `${s} s`;
}

/** Plan schedule_task; `zone` is the person's timezone (platform) or the configured default. */
export function planTask(args: ScheduleArgs, zone: string, nowMs: number, settings: ScheduleSettings): Plan {
  if ((args.at === undefined) === (args.cron === undefined))
    return refuse("Give exactly one of `at` (an ISO time, for one run) or `cron` (a cron expression).");
  const timezone = args.timezone ?? zone;
  if (!isKnownTimezone(timezone))
    return refuse(`Unknown timezone "${timezone}": use an IANA name like Europe/Berlin.`);
  if (args.at !== undefined) {
    if (args.until !== undefined || args.max_runs !== undefined)
      return refuse("`until` and `max_runs` only apply to a cron schedule.");
    const at = parseTime(args.at);
    if (at === undefined)
      return refuse(`"${args.at}" is not an ISO time with an offset (e.g. 2026-12-01T09:00:00+01:00 or …Z).`);
    if (at <= nowMs) return refuse(`${args.at} is in the past.`);
    return {
      ok: true,
      schedule: { type: "once", at: new Date(at).toISOString() },
      firstMs: at,
      zone: timezone,
    };
  }
  const expression = (args.cron ?? "").trim();
  const problem = cronProblem(expression, timezone);
  if (problem) return refuse(`Invalid cron expression "${expression}": ${problem}.`);
  let until: number | undefined;
  if (args.until !== undefined) {
    until = parseTime(args.until);
    if (until === undefined) return refuse(`"${args.until}" is not an ISO time with an offset.`);
  }
  const schedule: TaskSchedule = {
    type: "cron",
    expression,
    timezone,
    ...(until === undefined ? {} : { until: new Date(until).toISOString() }),
    ...(args.max_runs === undefined ? {} : { maxRuns: args.max_runs }),
  };
  const gap = shortestGap(schedule, nowMs);
  if (gap.ms < settings.minIntervalMs) {
    const where = gap.atClockChange
      ? ` on a day the clocks change in ${timezone} (its times are checked as if it ran every day: move them away from the hour the clocks change)`
      : "";
    return refuse(
      `Runs of "${expression}" can come ${minutes(gap.ms)} apart${where}; tasks may run at most every ${minutes(settings.minIntervalMs)}.`,
    );
  }
  const firstMs = nextOccurrence(schedule, nowMs);
  if (firstMs === undefined) return refuse("That schedule has no run in the future (check `until`).");
  return { ok: true, schedule, firstMs, zone: timezone };
}

/** Plan wake_me_later: `in_s` seconds from now or at an ISO time, within the shortest and longest wait. */
export function planWake(args: WakeArgs, zone: string, nowMs: number, settings: ScheduleSettings): Plan {
  if ((args.in_s === undefined) === (args.at === undefined))
    return refuse("Give exactly one of `in_s` (seconds from now) or `at` (an ISO time).");
  const at = args.in_s !== undefined ? nowMs + Math.round(args.in_s * 1_000) : parseTime(args.at ?? "");
  if (at === undefined) return refuse(`"${args.at}" is not an ISO time with an offset.`);
  if (at <= nowMs) return refuse("The wake-up time must be in the future.");
  if (at - nowMs < settings.minWakeMs)
    return refuse(`A wake-up must be at least ${minutes(settings.minWakeMs)} ahead.`);
  if (at - nowMs > settings.maxWakeMs)
    return refuse(`A wake-up can be at most ${Math.round(settings.maxWakeMs / 3_600_000)} h ahead.`);
  return { ok: true, schedule: { type: "once", at: new Date(at).toISOString() }, firstMs: at, zone };
}
