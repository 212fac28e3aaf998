/**
 * Task limits: how many scheduled tasks and wake-ups a person and a workspace may have before a
 * new one is refused. Active tasks count per person and per workspace, since each runs model turns
 * nobody asked for at the time. Every task a person holds counts as well, paused ones included: a
 * paused task never expires (it stays, listed, until its creator or an approver cancels it), so
 * without this total a person could pile up tasks without bound by getting them paused and
 * creating more, and it is what bounds the store. The counts are the registry's view, which the
 * caller refreshes from the store first; they are not atomic across processes (see
 * schedule-service.ts).
 */
import type { ScheduleSettings } from "./schedule-settings.js";
import type { TaskRegistry } from "./task-registry.js";

/**
 * Why a new task for `owner` ("platform:userId") in `workspace` ("platform:workspace") is refused
 * under the configured limits, as text for the person; undefined when it may be created.
 */
export function limitRefusal(
  registry: Pick<TaskRegistry, "activeForOwner" | "heldByOwner" | "activeInWorkspace">,
  settings: ScheduleSettings,
  owner: string,
  workspace: string,
): string | undefined {
  if (registry.activeForOwner(owner) >= settings.maxActivePerPerson)
    return `You already have ${settings.maxActivePerPerson} active scheduled tasks, the most allowed; cancel one first (list_scheduled_tasks shows them).`;
  if (registry.heldByOwner(owner) >= settings.maxTasksPerPerson)
    return `You already hold ${settings.maxTasksPerPerson} scheduled tasks and wake-ups, paused ones included, the most allowed: a paused task stays until it is cancelled. Cancel one first (list_scheduled_tasks shows them, paused ones marked "paused"; cancel_scheduled_task with its id deletes it).`;
  if (registry.activeInWorkspace(workspace) >= settings.maxActivePerWorkspace)
    return `This workspace has ${settings.maxActivePerWorkspace} active scheduled tasks, the most allowed.`;
  return undefined;
}
