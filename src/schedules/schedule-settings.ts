/**
 * Schedule settings: the runaway guards and timing of scheduled tasks and wake-ups, with the
 * defaults of the `schedules` config section and the conversion from it (seconds to ms).
 */
import type { CoworkerConfig } from "../config/schema.js";

export interface ScheduleSettings {
  /** Timezone of a cron task when neither the call nor the platform names one. */
  readonly defaultTimezone: string;
  /** A due time missed by at most this much (service down) still runs at start, ms. */
  readonly catchUpMs: number;
  /** Shortest gap between two runs of one task, ms. */
  readonly minIntervalMs: number;
  /** Active tasks (wake-ups included) one person may have. */
  readonly maxActivePerPerson: number;
  /**
   * Tasks (wake-ups included) one person may hold, paused ones included: a paused task stays until
   * someone cancels it, so without this a person could pile up tasks by getting them paused.
   */
  readonly maxTasksPerPerson: number;
  /** Active tasks one platform workspace may have. */
  readonly maxActivePerWorkspace: number;
  /** Furthest ahead a wake-up may be set, ms. */
  readonly maxWakeMs: number;
  /** Nearest ahead a wake-up may be set, ms. */
  readonly minWakeMs: number;
  /**
   * Wake-ups (and tasks no person approved) in a row a chain may have: one set by a turn a wake-up
   * or such a task's run started is one deeper; past this depth wake_me_later and the agent's
   * schedule_task are refused until a person writes (wake-chains.ts).
   */
  readonly maxWakeChain: number;
  /** Wake-ups one conversation (thread, whatever its session) may set per rolling hour. */
  readonly wakesPerSessionPerHour: number;
  /** Failed runs in a row that pause a task. */
  readonly maxFailures: number;
}

export const DEFAULT_SCHEDULE_SETTINGS: ScheduleSettings = Object.freeze({
  defaultTimezone: "UTC",
  catchUpMs: 3_600_000,
  minIntervalMs: 300_000,
  maxActivePerPerson: 20,
  maxTasksPerPerson: 40,
  maxActivePerWorkspace: 200,
  maxWakeMs: 7 * 86_400_000,
  minWakeMs: 60_000,
  maxWakeChain: 5,
  wakesPerSessionPerHour: 10,
  maxFailures: 3,
});

/** Settings from the config file's `schedules` section. */
export function scheduleSettingsFromConfig(section: CoworkerConfig["schedules"]): ScheduleSettings {
  return Object.freeze({
    defaultTimezone: section.default_timezone,
    catchUpMs: Math.round(section.catch_up_s * 1_000),
    minIntervalMs: Math.round(section.min_interval_s * 1_000),
    maxActivePerPerson: section.max_active_per_person,
    maxTasksPerPerson: section.max_tasks_per_person,
    maxActivePerWorkspace: section.max_active_per_workspace,
    maxWakeMs: Math.round(section.max_wake_s * 1_000),
    minWakeMs: Math.round(section.min_wake_s * 1_000),
    maxWakeChain: section.max_wake_chain,
    wakesPerSessionPerHour: section.wakes_per_session_per_hour,
    maxFailures: section.max_failures,
  });
}
