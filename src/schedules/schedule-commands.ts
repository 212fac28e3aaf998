/**
 * The thread commands of scheduled tasks: `schedules` lists the person's tasks and wake-ups
 * across all their conversations (saying where each posts), `cancel_task <id>` cancels one of
 * them (or anyone's, for an approver) — from any conversation with the bot.
 */
import type { ExtraCommand } from "../sessions/extra-commands.js";
import type { ScheduleService } from "./schedule-service.js";

/** `schedules` and `cancel_task <id>` as thread commands. */
export function scheduleCommands(
  service: Pick<ScheduleService, "linesFor" | "cancel">,
): readonly ExtraCommand[] {
  return Object.freeze([
    {
      name: "schedules",
      usage: "schedules — list your scheduled tasks and wake-ups, in every conversation",
      minArgs: 0,
      maxArgs: 0,
      run: async ({ sessionId, target, user }) =>
        service.linesFor({ platform: target.platform, userId: user.id, sessionId }).join("\n"),
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
