/**
 * Occurrences: when a schedule is due, on croner (a maintained cron parser with timezones).
 * Validates expressions (5 fields, or 6 with leading seconds) and IANA timezones, lists the next
 * occurrences, and measures the shortest gap between runs for the minimum-interval guard.
 *
 * Daylight-saving changes are croner's, and not regular: on a spring-forward day a schedule
 * naming one minute of the skipped hour ("30 2 * * *" in Europe/Berlin) runs at the first moment
 * after it (03:00), but one naming several minutes of it ("*\/15 2 * * *") has no run that day;
 * on a fall-back day the repeated hour's times run twice ("0,30 2 * * *" runs four times).
 *
 * The minimum-interval guard (`shortestGap`) takes the times of day the expression names as if
 * it ran every day: two runs of a day are never closer than two of its times, nor a day's last
 * run and the next day's first than those times across midnight — however rarely its days,
 * months and weekdays let two run days follow each other ("0,59 0,23 1,28 * *" runs at 23:59 and
 * then at 00:00 the next day only where a February of 28 days ends). So a schedule
 * whose days never follow each other but whose times are close across midnight is refused too.
 * Those are a day's times only while the zone's offset holds: where it changes, local times repeat
 * ("0,59 2 * * *": 02:59, then the second 02:00 a minute later) or are skipped (only a schedule of
 * one time a day moves to the first moment after), so the guard also takes the runs next to each
 * change of the coming year (offset-changes.ts) of that every-day schedule; a zone's rules repeat
 * yearly.
 */
import { Cron, CronPattern } from "croner";
import { offsetChanges } from "./offset-changes.js";
import type { TaskSchedule } from "./scheduled-task.js";

/** Whether `zone` is an IANA timezone this runtime knows. */
export function isKnownTimezone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** Parse a cron expression in a timezone; throws an Error saying what is wrong. */
function cronOf(expression: string, timezone: string): Cron {
  const fields = expression.trim().split(/\s+/).length;
  if (fields !== 5 && fields !== 6)
    throw new Error(`a cron expression has 5 fields (minute hour day month weekday), not ${fields}`);
  if (!isKnownTimezone(timezone)) throw new Error(`unknown timezone "${timezone}" (use an IANA name)`);
  return new Cron(expression.trim(), { timezone, paused: true, mode: "5-or-6-parts" });
}

/** Check a cron expression and timezone; the problem as text, or undefined when both are fine. */
export function cronProblem(expression: string, timezone: string): string | undefined {
  try {
    cronOf(expression, timezone);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message.replace(/^CronPattern: /, "") : String(error);
  }
}

/**
 * Up to `count` due times of `schedule` strictly after `afterMs` (epoch ms), honouring `until`
 * and, when `runsSoFar` is given, `maxRuns`.
 */
export function nextOccurrences(
  schedule: TaskSchedule,
  afterMs: number,
  count: number,
  runsSoFar = 0,
): readonly number[] {
  if (schedule.type === "once") {
    const at = Date.parse(schedule.at);
    return at > afterMs && runsSoFar === 0 && count > 0 ? [at] : [];
  }
  const left = schedule.maxRuns === undefined ? count : Math.min(count, schedule.maxRuns - runsSoFar);
  if (left <= 0) return [];
  const until = schedule.until === undefined ? Number.POSITIVE_INFINITY : Date.parse(schedule.until);
  return cronOf(schedule.expression, schedule.timezone)
    .nextRuns(left, new Date(afterMs))
    .map((date) => date.getTime())
    .filter((at) => at <= until);
}

/** The next due time after `afterMs`, or undefined when the schedule is over. */
export function nextOccurrence(schedule: TaskSchedule, afterMs: number, runsSoFar = 0): number | undefined {
  return nextOccurrences(schedule, afterMs, 1, runsSoFar)[0];
}

/** The shortest gap between a cron schedule's runs (`shortestGap`), and where it comes. */
export interface ShortestGap {
  /** Milliseconds; Infinity when the schedule has fewer than two runs left. */
  readonly ms: number;
  /**
   * Whether only the runs next to a change of the zone's offset come this close, taken as if the
   * schedule ran every day (so possibly on a day it never runs: see the module comment).
   */
  readonly atClockChange: boolean;
}

/**
 * The shortest gap a cron schedule's runs can have (module comment): between two of the times of
 * day it names, across midnight included, and between the runs next to a change of the zone's
 * offset, had it run every day.
 */
export function shortestGap(schedule: TaskSchedule, afterMs: number): ShortestGap {
  if (schedule.type === "once" || nextOccurrences(schedule, afterMs, 2).length < 2)
    return { ms: Number.POSITIVE_INFINITY, atClockChange: false };
  const times = timesOfDay(schedule.expression, schedule.timezone);
  let daily = (times[0]! + SECONDS_PER_DAY - times.at(-1)!) * 1_000;
  for (let i = 1; i < times.length; i++) daily = Math.min(daily, (times[i]! - times[i - 1]!) * 1_000);
  let atChange = Number.POSITIVE_INFINITY;
  const everyDay = cronOf(everyDayExpression(schedule.expression), schedule.timezone);
  for (const change of offsetChanges(schedule.timezone, afterMs)) {
    // The last run before the change (none runs between a whole second and the ms before it).
    const [before] = everyDay.previousRuns(1, new Date(change - 1));
    if (before === undefined) continue;
    const runs = [before, ...everyDay.nextRuns(2, before)].map((run) => run.getTime());
    for (let i = 1; i < runs.length; i++) atChange = Math.min(atChange, runs[i]! - runs[i - 1]!);
  }
  return atChange < daily ? { ms: atChange, atClockChange: true } : { ms: daily, atClockChange: false };
}

/** A cron expression's times of day on every day: its day, month and weekday fields made "*". */
function everyDayExpression(expression: string): string {
  const fields = expression.trim().split(/\s+/);
  return [...fields.slice(0, -3), "*", "*", "*"].join(" ");
}

const SECONDS_PER_DAY = 86_400;

/** The times of day (seconds after midnight, ascending) a valid cron expression names. */
function timesOfDay(expression: string, timezone: string): number[] {
  const pattern = new CronPattern(expression.trim(), timezone, { mode: "5-or-6-parts" });
  const times: number[] = [];
  for (let hour = 0; hour < 24; hour++) {
    if (!pattern.hour[hour]) continue;
    for (let minute = 0; minute < 60; minute++) {
      if (!pattern.minute[minute]) continue;
      for (let second = 0; second < 60; second++)
        if (pattern.second[second]) times.push(hour * 3_600 + minute * 60 + second);
    }
  }
  return times;
}

/** What fell due while nobody ran a schedule: the newest due time and how many came before it. */
export interface Missed {
  readonly latest: number;
  /** Due times before `latest`, counted up to MISSED_COUNT_CAP. */
  readonly earlier: number;
}

/** Most missed runs counted (a long outage of a frequent task is not enumerated). */
export const MISSED_COUNT_CAP = 500;

/**
 * The due times of `schedule` in [fromMs, nowMs] (`fromMs` is the stored next run, itself due):
 * the newest one and how many came before it; undefined when `fromMs` is still ahead.
 */
export function missedOccurrences(
  schedule: TaskSchedule,
  fromMs: number,
  nowMs: number,
  runsSoFar: number,
): Missed | undefined {
  if (fromMs > nowMs) return undefined;
  if (schedule.type === "once") return { latest: fromMs, earlier: 0 };
  const end = Math.min(nowMs, schedule.until === undefined ? nowMs : Date.parse(schedule.until));
  const left = schedule.maxRuns === undefined ? Number.POSITIVE_INFINITY : schedule.maxRuns - runsSoFar;
  const cron = cronOf(schedule.expression, schedule.timezone);
  if (left <= MISSED_COUNT_CAP) {
    const due = [fromMs, ...dueTimesUpTo(cron, fromMs, end, left - 1)];
    return { latest: due.at(-1) ?? fromMs, earlier: due.length - 1 };
  }
  const previous = cron.previousRuns(1, new Date(end + 1))[0];
  const latest = previous !== undefined && previous.getTime() > fromMs ? previous.getTime() : fromMs;
  if (latest === fromMs) return { latest, earlier: 0 };
  const between = dueTimesUpTo(cron, fromMs, latest - 1, MISSED_COUNT_CAP).length;
  return { latest, earlier: Math.min(MISSED_COUNT_CAP, between + 1) };
}

/**
 * A cron's due times after `afterMs` and no later than `endMs`, at most `limit`, found one at a
 * time: a task retried a few minutes late counts its few missed runs, not MISSED_COUNT_CAP
 * future ones (500 of them took ~40 ms of the event loop per count).
 */
function dueTimesUpTo(cron: Cron, afterMs: number, endMs: number, limit: number): number[] {
  const times: number[] = [];
  let next = cron.nextRun(new Date(afterMs));
  while (next !== null && next.getTime() <= endMs && times.length < limit) {
    times.push(next.getTime());
    next = cron.nextRun(next);
  }
  return times;
}

/**
 * A time as people read it in a timezone, with the zone's UTC offset then: "Tue, 1 Dec 2026, 09:00
 * (Europe/Berlin, UTC+01:00)", in UTC "… (UTC)". The offset is spelled out because a zone's name
 * can say the opposite of it (Etc/GMT+5 is five hours behind UTC), and a card must not let the
 * model's choice of name pass a 03:00 run for an afternoon one.
 */
export function formatIn(atMs: number, timezone: string): string {
  const text = new Intl.DateTimeFormat("en-GB", {
    timeZone: timezone,
    weekday: "short",
    day: "numeric",
    month: "short",
    year: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    hour12: false,
  }).format(new Date(atMs));
  return timezone === "UTC" ? `${text} (UTC)` : `${text} (${timezone}, ${utcOffsetIn(atMs, timezone)})`;
}

/** The zone's offset from UTC at that time, as "UTC+01:00" / "UTC-05:00" / "UTC+00:00". */
function utcOffsetIn(atMs: number, timezone: string): string {
  const offset = new Intl.DateTimeFormat("en-GB", { timeZone: timezone, timeZoneName: "longOffset" })
    .formatToParts(new Date(atMs))
    .find((part) => part.type === "timeZoneName")?.value;
  // "GMT+01:00"; some ICU versions write a zero offset as "GMT" alone.
  return `UTC${offset?.replace(/^GMT/, "") || "+00:00"}`;
}
