/**
 * Shared by the SIGKILL test and its child process: the settings they run on (runs a second
 * apart) and a session layer that appends every wake turn to a file synchronously, so a run
 * handed over just before a kill is on disk.
 */
import { appendFileSync } from "node:fs";
import { DEFAULT_SCHEDULE_SETTINGS, type ScheduleSettings } from "../../src/schedules/schedule-settings.js";
import type { WakeableSessions } from "../../src/subscriptions/session-wake.js";

export const CHILD_SETTINGS: ScheduleSettings = Object.freeze({
  ...DEFAULT_SCHEDULE_SETTINGS,
  minIntervalMs: 1_000,
});

/** Appends "<taskId> <dueAt>" per wake turn to `file`, then calls `onRun`. */
export function recordingSessions(file: string, onRun: () => void = () => undefined): WakeableSessions {
  return {
    async wake(turn) {
      appendFileSync(file, `${turn.scheduledRun?.taskId} ${turn.scheduledRun?.dueAt}\n`);
      onRun();
      return { status: "started" };
    },
    isBusy: () => false,
  };
}
