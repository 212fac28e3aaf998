/**
 * The thread commands of scheduled tasks: `schedules` lists the person's tasks and wake-ups
 * across all their conversations (saying where each posts), one card each with a Cancel button;
 * `cancel_task <id>` cancels one (or anyone's, for an approver) — from any conversation with the
 * bot. The canceller handles those Cancel presses.
 */
import type { ExtraCommand } from "../sessions/extra-commands.js";
import type { ItemCanceller } from "../sessions/item-cards.js";
import type { ScheduleService } from "./schedule-service.js";

type Listing = Pick<ScheduleService, "listFor" | "linesFor" | "cancel">;

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
        const tasks = service.listFor(actor);
        const [header = "", ...lines] = service.linesFor(actor);
        if (tasks.length === 0) return header;
        const items = tasks.map((task, i) => ({
          id: task.id,
          title: `${task.kind === "wake" ? "Wake-up" : "Scheduled task"} ${task.id}`,
          text: (lines[i] ?? "").replace(/^- /, ""),
        }));
        return { text: header, items };
      },
    },
    {
      name: "cancel_task",
      usage: "cancel_task <id> — cancel one of your scheduled tasks or wake-ups",
      minArgs: 1,
      maxArgs: 1,
      run: async ({ sessionId, target, user, args }) =>
        (await service.cancel({ platform: target.platform, userId: user.id, sessionId }, args[0] ?? ""))
          .message,
    },
  ]);
}

/** Cancels tasks and wake-ups from their listing cards (owner or approver, as the service decides). */
export function scheduleCanceller(service: Pick<ScheduleService, "cancel">): ItemCanceller {
  return {
    prefixes: ["tsk_", "wak_"],
    cancel: (platform, user, id) => service.cancel({ platform, userId: user.id }, id),
  };
}
