/**
 * ScheduledTask: a person's standing request that a conversation runs a prompt later — once at a
 * time, or on a cron schedule in a timezone — or a session's own wake-up with a note. Each task
 * says whose words its text is: a person's (they approved it on the card) or the agent's own (a
 * wake-up's note, a task set up with no person seeing its text). Immutable domain types with their
 * zod schemas (stored records), the id format and freezing, and the record helpers runs write with.
 */
import { randomBytes } from "node:crypto";
import { z } from "zod";
import type { PlatformUser, ThreadTarget } from "../core/thread-target.js";
import { platformUserSchema, threadTargetSchema } from "../subscriptions/subscription.js";

/** When a task runs: once at a time, or on a cron expression in a timezone (optionally bounded). */
export type TaskSchedule =
  | { readonly type: "once"; readonly at: string }
  | {
      readonly type: "cron";
      readonly expression: string;
      readonly timezone: string;
      readonly until?: string;
      readonly maxRuns?: number;
    };

/** A scheduled task (schedule_task), or a session's wake-up (no approval, one run). */
export type TaskKind = "task" | "wake";

/**
 * Whose words a task's text is: `person` when a person approved that very schedule_task call on
 * its card (in interactive mode, or in reviewed mode once the reviewer was unsure), `agent` for a
 * wake-up's note and for a task set up with no person seeing its text (auto mode, a standing
 * grant, the reviewer's allow). An agent's text is the agent's own note when the task runs
 * (core/agent-note.ts).
 */
export type PromptAuthor = "person" | "agent";

/** Active tasks run; paused ones wait for a person (guard tripped, thread gone). */
export type TaskStatus = "active" | "paused";

export interface ScheduledTask {
  readonly id: string;
  readonly kind: TaskKind;
  /** The session the task runs in (its origin). */
  readonly sessionId: string;
  /** That session's thread: runs are answered there. */
  readonly target: ThreadTarget;
  /** Who asked: runs are theirs (requester, approvals), and only they (or an approver) cancel. */
  readonly createdBy: PlatformUser;
  /** The prompt of a task, or the note of a wake-up. */
  readonly prompt: string;
  /** Whose words `prompt` is (records stored before it was kept read as the agent's). */
  readonly promptBy: PromptAuthor;
  readonly schedule: TaskSchedule;
  readonly status: TaskStatus;
  /** Why a paused task is paused. */
  readonly statusNote?: string;
  /** ISO time. */
  readonly createdAt: string;
  /** The next due time (ISO); absent once nothing is left to run. */
  readonly nextRunAt?: string;
  readonly runs: number;
  /** The due time of the latest run (ISO). */
  readonly lastRunAt?: string;
  /** How the latest run ended, in a few words. */
  readonly lastResult?: string;
  /** Runs that failed in a row. */
  readonly failures: number;
  /**
   * The due time (ISO) of the first of the runs the session layer could not take, while none has
   * been taken since: how long the task has gone without a run handed over, across retries,
   * occurrences and restarts.
   */
  readonly notTakenSince?: string;
}

/** Longest prompt or note accepted. */
export const MAX_PROMPT_CHARS = 4_000;

const isoTime = z.iso.datetime({ offset: true });

/** A stored TaskSchedule. */
export const taskScheduleSchema: z.ZodType<TaskSchedule> = z.discriminatedUnion("type", [
  z.object({ type: z.literal("once"), at: isoTime }),
  z.object({
    type: z.literal("cron"),
    expression: z.string().min(1).max(120),
    timezone: z.string().min(1).max(64),
    until: isoTime.optional(),
    maxRuns: z.number().int().positive().optional(),
  }),
]);

/** The whole shape of a task's or wake-up's id (newTaskId): "tsk_" or "wak_" + 12 hex digits. */
const TASK_ID = /^(tsk|wak)_[0-9a-f]{12}$/;

/** A stored ScheduledTask (the `data` of its versioned record). */
export const scheduledTaskSchema: z.ZodType<ScheduledTask> = z.object({
  id: z.string().regex(TASK_ID),
  kind: z.enum(["task", "wake"]),
  sessionId: z.string().min(1).max(180),
  target: threadTargetSchema,
  createdBy: platformUserSchema,
  prompt: z.string().min(1).max(MAX_PROMPT_CHARS),
  promptBy: z.enum(["person", "agent"]).default("agent"),
  schedule: taskScheduleSchema,
  status: z.enum(["active", "paused"]),
  statusNote: z.string().max(500).optional(),
  createdAt: isoTime,
  nextRunAt: isoTime.optional(),
  runs: z.number().int().nonnegative(),
  lastRunAt: isoTime.optional(),
  lastResult: z.string().max(200).optional(),
  failures: z.number().int().nonnegative(),
  notTakenSince: isoTime.optional(),
});

/** A fresh id: "tsk_" (tasks) or "wak_" (wake-ups) + 12 hex digits. */
export function newTaskId(kind: TaskKind): string {
  return `${kind === "task" ? "tsk" : "wak"}_${randomBytes(6).toString("hex")}`;
}

/** Whether `id` is, whole, a task's or a wake-up's id (newTaskId), not merely starting like one. */
export function isTaskId(id: string): boolean {
  return TASK_ID.test(id);
}

/** Whether `id` names a wake-up (newTaskId("wake")) rather than a scheduled task. */
export function isWakeId(id: string): boolean {
  return /^wak_[0-9a-f]{12}$/.test(id);
}

/** Freeze a task and its nested records. */
export function freezeTask(task: ScheduledTask): ScheduledTask {
  return Object.freeze({
    ...task,
    target: Object.freeze({
      ...task.target,
      ...(task.target.extra ? { extra: Object.freeze({ ...task.target.extra }) } : {}),
    }),
    createdBy: Object.freeze({ ...task.createdBy }),
    schedule: Object.freeze({ ...task.schedule }),
  });
}

/** The person key a task counts against: "platform:userId". */
export function ownerKeyOf(task: Pick<ScheduledTask, "target" | "createdBy">): string {
  return `${task.target.platform}:${task.createdBy.id}`;
}

/** The workspace key a task counts against: "platform:workspace". */
export function workspaceKeyOf(target: Pick<ThreadTarget, "platform" | "workspace">): string {
  return `${target.platform}:${target.workspace}`;
}

/** A record without its undefined fields (stored records omit absent optionals). */
export function withoutUndefined<T extends object>(record: T): T {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)) as T;
}

/** Whether the stored task is still what a run saw or left (active, same run count and next run). */
export function unchanged(current: ScheduledTask, stored: ScheduledTask): boolean {
  return (
    current.status === "active" && current.runs === stored.runs && current.nextRunAt === stored.nextRunAt
  );
}
