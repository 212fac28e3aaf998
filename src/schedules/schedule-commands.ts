/**
 * The thread commands of scheduled tasks: `schedules` lists the person's tasks and wake-ups
 * across all their conversations (saying where each posts), one card each with a Cancel button;
 * `cancel_task <id>` cancels one (or anyone's, for an approver) — from any conversation with the
 * bot. The canceller handles those Cancel presses. In a conversation several people share, the
 * listing shows only the tasks posting there (ModuleCommands.listing reads each item's `here`), a
 * refused `cancel_task` names only those, not the person's tasks in every conversation, and a
 * successful one (or a card's Cancel) names where the task posted only when it posted there.
 */
import { isSharedThread, sessionKeyOf } from "../core/thread-target.js";
import type { ExtraCommand } from "../sessions/extra-commands.js";
import type { ItemCanceller } from "../sessions/item-cards.js";
import { isTaskId } from "./scheduled-task.js";
import type { ScheduleService } from "./schedule-service.js";
import { shownIn } from "./task-text.js";

/** What the commands need; `refreshFor` brings in other processes' tasks first. */
type Listing = Pick<ScheduleService, "refreshFor" | "listFor" | "linesFor" | "cancel">;

/** `schedules` and `cancel_task <id>` as thread commands. */
export function scheduleCommands(service: Listing): readonly ExtraCommand[] {
  return Object.freeze([
    {
      name: "schedules",
      usage: "schedules — list your scheduled tasks and wake-ups, in every conversation",
      minArgs: 0,
      maxArgs: 0,
      run: async ({ sessionId, target, user }) => {
        const actor = { platform: target.platform, userId: user.id, sessionId };
        await service.refreshFor(actor);
        const tasks = service.listFor(actor);
        const [header = "", ...lines] = service.linesFor(actor);
        if (tasks.length === 0) return header;
        const items = tasks.map((task, i) => ({
          id: task.id,
          title: `${task.kind === "wake" ? "Wake-up" : "Scheduled task"} ${task.id}`,
          text: (lines[i] ?? "").replace(/^- /, ""),
          here: sessionKeyOf(task.target) === sessionKeyOf(target),
        }));
        return { text: header, items };
      },
    },
    {
      name: "cancel_task",
      usage: "cancel_task <id> — cancel one of your scheduled tasks or wake-ups",
      minArgs: 1,
      maxArgs: 1,
      run: async ({ sessionId, target, user, args }) => {
        const actor = { platform: target.platform, userId: user.id, sessionId, asking: target };
        const id = args[0] ?? "";
        const outcome = await service.cancel(actor, id);
        if (outcome.ok || !isSharedThread(target)) return outcome.message;
        const here = service
          .listFor(actor)
          .filter((task) => shownIn(task, target))
          .map((task) => task.id);
        return `You have no scheduled task ${id}. Yours in this conversation: ${here.join(", ") || "none"} (send schedules in a direct message with me to see all of yours).`;
      },
    },
  ]);
}

/** Cancels tasks and wake-ups from their listing cards (owner or approver, as the service decides). */
export function scheduleCanceller(service: Pick<ScheduleService, "cancel">): ItemCanceller {
  return {
    isItem: isTaskId,
    cancel: (target, user, id) =>
      service.cancel({ platform: target.platform, userId: user.id, asking: target }, id),
  };
}
