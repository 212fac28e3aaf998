/**
 * Scheduled tasks as the app wires them: one per assembly, shared by the session layer (the
 * agent's scheduling tools, `status` lines, the `schedules` / `cancel_task` commands and the
 * Cancel buttons of the listing, turn ends
 * reported back for failure counting) and the channel starters (each platform's timezone lookup,
 * the bot's removal from a channel). The ScheduleService opens on the app's store once the
 * SessionManager exists, with runs as wake turns of the tasks' sessions.
 */
import type { Logger } from "pino";
import { scheduleCanceller, scheduleCommands } from "../schedules/schedule-commands.js";
import {
  type Actor,
  type CancelTarget,
  type NewTaskArgs,
  ScheduleService,
  type TimezoneLookup,
} from "../schedules/schedule-service.js";
import type { ScheduledTask } from "../schedules/scheduled-task.js";
import type { ScheduleSettings } from "../schedules/schedule-settings.js";
import { createScheduleTools, type ScheduleToolsService } from "../schedules/schedule-tools.js";
import type { ScheduleArgs } from "../schedules/task-planner.js";
import type { NewWakeArgs } from "../schedules/wake-later.js";
import type { Caller, ThreadTarget } from "../core/thread-target.js";
import type { SessionManagerOptions } from "../sessions/session-manager.js";
import type { SlotBudget } from "../store/slot-budget.js";
import type { Store } from "../store/store.js";
import type { Outcome } from "../subscriptions/channel-access.js";
import type { NotifyingSessions } from "../subscriptions/session-wake.js";
import type { AnyTool } from "../core/tool.js";

/** What the schedules open on: the store, the session layer and its notices, settings, approvers. */
export interface SchedulesOpenOptions {
  readonly store: Store;
  readonly sessions: NotifyingSessions;
  readonly settings: ScheduleSettings;
  readonly approvers: readonly string[];
  readonly logger: Logger;
  /** Where wake_me_later calls per session are counted: the app's budget (AppContext.budget). */
  readonly budget: SlotBudget;
}

/** The scheduled run a turn was started for (its task and due time), from the turn's metadata. */
const scheduledRunOf = (
  metadata: Readonly<Record<string, unknown>>,
): { taskId: string; dueAt: string | undefined } | undefined => {
  const run = metadata.scheduledRun as { taskId?: unknown; dueAt?: unknown } | undefined;
  if (typeof run?.taskId !== "string") return undefined;
  return { taskId: run.taskId, dueAt: typeof run.dueAt === "string" ? run.dueAt : undefined };
};

/** The app's scheduled tasks (see module comment). */
export class AppSchedules implements ScheduleToolsService {
  /** The agent's scheduling tools, for every session (engine factory `extraTools`). */
  readonly tools: readonly AnyTool[] = createScheduleTools(this);
  private service: ScheduleService | undefined;
  private readonly timezones = new Map<string, TimezoneLookup>();
  private logger: Logger | undefined;

  /** Open the ScheduleService (once the session layer exists); arms every stored task. */
  async open(options: SchedulesOpenOptions): Promise<void> {
    if (this.service) throw new Error("scheduled tasks are already open");
    const logger = options.logger.child({ component: "schedules" });
    this.logger = logger;
    this.service = await ScheduleService.open({
      store: options.store,
      sessions: options.sessions,
      notify: (target, text) => options.sessions.notify(target, text),
      approvers: options.approvers,
      settings: options.settings,
      timezoneOf: (target, userId) =>
        this.timezones.get(target.platform)?.(target, userId) ?? Promise.resolve(undefined),
      onError: (error, context) => logger.warn({ err: error }, `schedules: ${context}`),
      wakeBudget: options.budget,
    });
  }

  /** Start running tasks: after the channels have registered their outputs. */
  start(): void {
    this.opened().start();
  }

  /**
   * What the SessionManager takes from schedules: status lines, commands, turn ends, and the
   * thread's switch to a new session ("new"), which re-points its tasks and wake-ups.
   */
  sessionOptions(): Pick<
    SessionManagerOptions,
    "statusExtras" | "extraCommands" | "onTurnEnd" | "itemCancellers" | "onSessionReplaced"
  > {
    return {
      itemCancellers: [scheduleCanceller(this)],
      statusExtras: async (sessionId) => this.service?.statusLines(sessionId) ?? [],
      onSessionReplaced: async (oldId, newId) => this.service?.moveSession(oldId, newId),
      extraCommands: scheduleCommands(this),
      onTurnEnd: (end) => {
        const run = scheduledRunOf(end.metadata);
        if (run === undefined) return;
        this.service?.turnEnded(run.taskId, end.status, run.dueAt).catch((error: unknown) => {
          this.logger?.warn({ err: error, taskId: run.taskId }, "schedules: recording a run's result failed");
        });
      },
    };
  }

  /** A platform's way to find a person's timezone (Slack users.info tz). */
  registerTimezones(platform: string, lookup: TimezoneLookup): void {
    this.timezones.set(platform, lookup);
  }

  /** The bot was removed from a channel: pause the tasks posting there. */
  channelGone(channel: Pick<ThreadTarget, "platform" | "workspace" | "channel">): void {
    this.service?.channelGone(channel).then(
      (paused) => {
        if (paused > 0)
          this.logger?.info({ ...channel, paused }, "paused scheduled tasks of a removed channel");
      },
      (error: unknown) => this.logger?.error({ err: error, ...channel }, "pausing scheduled tasks failed"),
    );
  }

  preview(caller: Caller, args: ScheduleArgs): Promise<{ summary: string; detail: string }> {
    return this.opened().preview(caller, args);
  }

  /**
   * schedule_task, with whether a person approved its text (`promptBy`) and the scheduled run that
   * started the calling turn (`wokenBy`, for the chain an agent's task is a link of).
   */
  create(caller: Caller, args: NewTaskArgs): Promise<Outcome> {
    return this.opened().create(caller, args);
  }

  /** wake_me_later, with the scheduled run that started the calling turn (`wokenBy`, for its chain). */
  wakeLater(caller: Caller, args: NewWakeArgs): Promise<Outcome> {
    return this.opened().wakeLater(caller, args);
  }

  refreshFor(actor: Pick<Actor, "platform" | "userId">): Promise<void> {
    return this.opened().refreshFor(actor);
  }

  listFor(actor: Actor): readonly ScheduledTask[] {
    return this.opened().listFor(actor);
  }

  linesFor(actor: Actor): readonly string[] {
    return this.opened().linesFor(actor);
  }

  toCancel(actor: Actor, id: string): Promise<CancelTarget> {
    return this.opened().toCancel(actor, id);
  }

  cancel(actor: Actor, id: string): Promise<Outcome> {
    return this.opened().cancel(actor, id);
  }

  /** Stop the timer and wait for runs being handed over (tasks stay in the store). */
  async shutdown(): Promise<void> {
    const service = this.service;
    this.service = undefined;
    await service?.shutdown();
  }

  private opened(): ScheduleService {
    if (!this.service)
      throw new Error("scheduled tasks are not available (the service is starting or shutting down)");
    return this.service;
  }
}
