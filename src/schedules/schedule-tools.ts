/**
 * The agent's scheduling tools: schedule_task (a write: interactive mode asks, with a card saying
 * what runs, where and the next three runs; auto runs it), list_scheduled_tasks and
 * cancel_scheduled_task (the person's own tasks across all their conversations; cancelling is a
 * write too, its card naming the task that goes away — the one ScheduleService.toCancel says the
 * cancel ends, so card and cancel cannot disagree), and wake_me_later (no approval: it only
 * wakes this same conversation, bounded and rate-limited). A turn started by channel content can
 * never create a task or a wake-up.
 *
 * Whose words a task's text is: a person's only when a person approved that very schedule_task
 * call on its card (ToolContext.approvedByPerson) — in interactive mode, or in reviewed mode after
 * the reviewer was unsure. When anything else let it run (auto mode, a standing grant, the
 * reviewer's allow) no person saw the text, so — like every wake-up's note — it is the agent's
 * own, and the runs it starts are marked so (core/agent-note.ts). That is why wake_me_later can stay
 * free of approval in every mode: a note gains no trust, it only starts a turn here, as the same
 * requester, in which every call is decided as usual and the reviewer judges against the person's
 * own last request — never against the note, nor a note a woken turn leaves for the next one.
 * What bounds it: a wake-up is at least a minimum delay ahead, a conversation sets at most so many
 * an hour, and a turn a wake-up started (its request's scheduledRun names a wake-up) sets at most
 * one, one deeper in its chain, which ends at the configured depth until a person writes. A task
 * whose text is the agent's own is a link of that chain too, and a turn its run starts counts as
 * woken (wake-chains.ts): else a woken turn at the end would schedule a run in a few minutes and
 * start a new chain from there, for ever.
 */
import { z } from "zod";
import { literalLine } from "../core/one-line.js";
import { personInMarkdown } from "../core/person-text.js";
import type { Caller } from "../core/thread-target.js";
import { callerOf } from "../subscriptions/subscription-tools.js";
import { type AnyTool, defineTool, fail, labelText, ok, type ToolContext } from "../core/tool.js";
import type { ConversationExecutionRequest } from "../core/request.js";
import { listingWidensAudience } from "../tools/session-target.js";
import { MAX_PROMPT_CHARS, type PromptAuthor } from "./scheduled-task.js";
import type { ScheduleService } from "./schedule-service.js";
import { cancellationSummary } from "./task-text.js";
import type { ChainRun } from "./wake-chains.js";

/**
 * What the tools need from the service; `refreshFor` brings in the tasks other processes on the
 * store created before a listing.
 */
export type ScheduleToolsService = Pick<
  ScheduleService,
  "preview" | "create" | "wakeLater" | "refreshFor" | "linesFor" | "toCancel" | "cancel"
>;

const FEATURE = "scheduled tasks are";
const isoArg = z.string().trim().min(1).max(40);

const scheduleSchema = z.object({
  prompt: z
    .string()
    .trim()
    .min(1)
    .max(MAX_PROMPT_CHARS)
    .describe("What to do at each run, in the person's words (e.g. 'summarise #deploys here')"),
  at: isoArg.optional().describe("One run at this ISO-8601 time with offset, e.g. 2026-12-01T09:00:00+01:00"),
  cron: z
    .string()
    .trim()
    .min(1)
    .max(120)
    .optional()
    .describe("Repeating: a 5-field cron expression (minute hour day month weekday), e.g. '0 9 * * 1-5'"),
  timezone: z
    .string()
    .trim()
    .min(1)
    .max(64)
    .optional()
    .describe("IANA timezone of the cron times (default: the person's, else the configured default)"),
  until: isoArg.optional().describe("Cron only: no runs after this ISO time"),
  max_runs: z.number().int().min(1).max(10_000).optional().describe("Cron only: stop after this many runs"),
});

/** Longest task id a cancel's arguments hold, and its card shows. */
const ID_SHOWN_CHARS = 40;

const cancelSchema = z.object({
  id: z.string().trim().min(1).max(ID_SHOWN_CHARS).describe("The task id (tsk_… or wak_…)"),
});

const wakeSchema = z.object({
  note: z
    .string()
    .trim()
    .min(1)
    .max(MAX_PROMPT_CHARS)
    .describe("What to check or do when woken, e.g. 'check whether the deploy finished'"),
  in_s: z
    .number()
    .positive()
    .max(400 * 86_400)
    .optional()
    .describe("Wake up this many seconds from now"),
  at: isoArg.optional().describe("Or wake up at this ISO-8601 time with offset"),
});

/** Build the four scheduling tools over a service. */
export function createScheduleTools(service: ScheduleToolsService): readonly AnyTool[] {
  const schedule = defineTool({
    name: "schedule_task",
    description:
      "Run a prompt later in this conversation, as the person asking: once (`at`) or repeatedly (`cron`). " +
      "Each run is posted here. Give exactly one of `at` or `cron`.",
    inputSchema: scheduleSchema,
    category: "write",
    risk: "medium",
    concurrent: false,
    label: (args) => `${args.cron ?? args.at ?? ""} ${labelText(args.prompt, 40)}`,
    async preview(args, { request }) {
      const caller = callerOf(request, FEATURE);
      if (typeof caller === "string") return { summary: `schedule_task (will be refused: ${caller})` };
      const shown = await service.preview(caller, args);
      return { summary: shown.summary, detail: { kind: "text", text: shown.detail } };
    },
    async execute(args, context) {
      const caller = callerOf(context.request, FEATURE);
      if (typeof caller === "string") return fail(caller);
      const outcome = await service.create(caller, {
        ...args,
        promptBy: promptAuthorOf(context),
        wokenBy: runThatStarted(context.request),
      });
      return outcome.ok ? ok(outcome.message) : fail(outcome.message);
    },
  });
  const list = defineTool({
    name: "list_scheduled_tasks",
    description:
      "List the person's scheduled tasks and wake-ups across all their conversations with me: id, prompt, " +
      "where each posts, schedule, next run and last result.",
    inputSchema: z.object({}),
    category: "read",
    risk: "low",
    concurrent: true,
    label: () => "the person's tasks",
    widensAudience: (_args, request) => listingWidensAudience(request, "the person's tasks and their text"),
    async execute(_args, context) {
      const caller = callerOf(context.request, FEATURE);
      if (typeof caller === "string") return fail(caller);
      const actor = actorOf(caller);
      await service.refreshFor(actor);
      return ok(service.linesFor(actor).join("\n"));
    },
  });
  const cancel = defineTool({
    name: "cancel_scheduled_task",
    description: "Cancel one of the person's scheduled tasks or wake-ups (from any conversation) by id.",
    inputSchema: cancelSchema,
    // It ends a standing item a person set up, maybe in another conversation (an approver's, anyone's):
    // a person decides, as for creating one, and it weighs as unsubscribe_channel does.
    category: "write",
    risk: "medium",
    concurrent: false,
    label: (args) => args.id,
    async preview(args, { request }) {
      return { summary: await cancelSummary(service, args.id, request) };
    },
    async execute(args, context) {
      const caller = callerOf(context.request, FEATURE);
      if (typeof caller === "string") return fail(caller);
      const outcome = await service.cancel(actorOf(caller), args.id);
      return outcome.ok ? ok(outcome.message) : fail(outcome.message);
    },
  });
  const wake = defineTool({
    name: "wake_me_later",
    description:
      "Wake this conversation once later with a note to yourself (e.g. check back on a deploy in 10 minutes). " +
      "Give `in_s` or `at`. No approval needed; bounded and rate-limited, and a turn you were woken for may set " +
      "one more, a few in a row at most before you must ask the person. When you wake, the note is your own " +
      "words, not a request from the person.",
    inputSchema: wakeSchema,
    category: "read",
    risk: "low",
    concurrent: false,
    label: (args) => labelText(args.note, 60),
    async execute(args, context) {
      const caller = callerOf(context.request, FEATURE);
      if (typeof caller === "string") return fail(caller);
      const outcome = await service.wakeLater(caller, { ...args, wokenBy: runThatStarted(context.request) });
      return outcome.ok ? ok(outcome.message) : fail(outcome.message);
    },
  });
  return Object.freeze([schedule, list, cancel, wake]);
}

/**
 * What cancel_scheduled_task's card says, from the same decision the cancel makes
 * (ScheduleService.toCancel): the task or wake-up it ends (its text, where it posts) when it is one
 * of the person's own; else only the id asked for, so the card shows nothing of a task they may not
 * cancel, nor whether it exists (an approver cancelling someone else's sees the id and whose it is:
 * the card is read by everyone in this thread, and the task's text is its creator's). A cancel that
 * will be refused says so — for a person who is no approver that is every id not of their own
 * tasks, existing or not.
 */
async function cancelSummary(
  service: ScheduleToolsService,
  id: string,
  request: ConversationExecutionRequest,
): Promise<string> {
  const caller = callerOf(request, FEATURE);
  const asked = literalLine(id, ID_SHOWN_CHARS);
  if (typeof caller === "string") return `cancel_scheduled_task ${asked} (will be refused: ${caller})`;
  const target = await service.toCancel(actorOf(caller), id);
  if (!target.ok)
    return `cancel scheduled task ${asked} (will be refused: not a task this person may cancel)`;
  if (target.own) return cancellationSummary(target.task, caller.sessionId, caller.target);
  const { createdBy, target: where } = target.task;
  const whose = personInMarkdown({
    platform: where.platform,
    id: createdBy.id,
    name: createdBy.name || createdBy.id,
  });
  return `cancel scheduled task ${asked} (${whose}'s)`;
}

/**
 * The scheduled run (a wake-up's or a task's) that started this turn, if one did: the session
 * layer marks a scheduled run's turn with `metadata.scheduledRun` (the model cannot set it).
 * Whether it continues a chain is the chain's to say (wake-chains.ts).
 */
function runThatStarted(request: ConversationExecutionRequest): ChainRun | undefined {
  const run = request.metadata.scheduledRun as
    | { readonly taskId?: unknown; readonly dueAt?: unknown }
    | undefined;
  if (typeof run?.taskId !== "string") return undefined;
  return typeof run.dueAt === "string" ? { taskId: run.taskId, dueAt: run.dueAt } : { taskId: run.taskId };
}

/**
 * Whose words a schedule_task call's text is: a person's when a person approved this very call on
 * its card; else nobody saw it (auto mode, a standing grant, the reviewer, which is not a person).
 */
function promptAuthorOf(context: ToolContext): PromptAuthor {
  return context.approvedByPerson === true ? "person" : "agent";
}

/** The person behind a caller, asking from the caller's conversation. */
export function actorOf(caller: Caller) {
  return {
    platform: caller.target.platform,
    userId: caller.requester.id,
    sessionId: caller.sessionId,
    asking: caller.target,
  };
}
