/**
 * Task text: how scheduled tasks read for people and the model — the schedule in words, where a
 * task posts, the lines of list_scheduled_tasks and the `schedules` command, the approval cards'
 * previews (where a new task posts, its next three runs and then its text, or why it will be
 * refused; what a cancel ends), and the marked input of a scheduled run, which says when its text
 * is the agent's own words rather than a person's; also the short pieces of the notices about a
 * task (its kind, its creator's DM, its text and lastResult clipped whole characters at a time,
 * the text on one line and escaped). What people read is markdown, and a task's text (a person's
 * or the model's words, a wake-up's note) and a refusal quoting the call's arguments go in as
 * plain text (markdownLiteral, literalLine), never as a link, a mention or formatting; a run's
 * input, which only the model reads, quotes it as written.
 */
import { markdownLiteral } from "../core/person-text.js";
import { literalLine } from "../core/one-line.js";
import { clip } from "../core/surrogate-pairs.js";
import { isSharedThread, sessionKeyOf, type ThreadTarget } from "../core/thread-target.js";
import { quoteOf } from "../subscriptions/channel-content-format.js";
import { placeOf } from "../subscriptions/subscription-text.js";
import { formatIn, nextOccurrences } from "./occurrences.js";
import type { ScheduledTask, TaskSchedule } from "./scheduled-task.js";

/**
 * Whether a reply in `asking`'s conversation may name `task` and where it posts: always in a
 * conversation only its person reads, and in a shared one only when the task posts there (its
 * other conversations, a DM or a private channel, are not for the people reading it).
 */
export function shownIn(task: Pick<ScheduledTask, "target">, asking: ThreadTarget): boolean {
  return !isSharedThread(asking) || sessionKeyOf(task.target) === sessionKeyOf(asking);
}

/**
 * Where `task` posts, as a reply in the session `here` (at `asking`, when known) names it: "this
 * conversation", its place, or "another conversation" where shownIn hides it.
 */
export function postsIn(
  task: Pick<ScheduledTask, "sessionId" | "target">,
  here: string | undefined,
  asking?: ThreadTarget,
): string {
  if (task.sessionId === here) return "this conversation";
  return asking === undefined || shownIn(task, asking) ? placeOf(task.target) : "another conversation";
}

/** Timezone a schedule's times are shown in. */
export function zoneOf(schedule: TaskSchedule, fallback: string): string {
  return schedule.type === "cron" ? schedule.timezone : fallback;
}

/** "once at …" / "cron `0 9 * * 1-5` in Europe/Berlin, until …, at most 5 runs". */
export function describeSchedule(schedule: TaskSchedule, fallbackZone: string): string {
  if (schedule.type === "once") return `once at ${formatIn(Date.parse(schedule.at), fallbackZone)}`;
  const bounds = [
    schedule.until === undefined ? "" : `, until ${formatIn(Date.parse(schedule.until), schedule.timezone)}`,
    schedule.maxRuns === undefined ? "" : `, at most ${schedule.maxRuns} runs`,
  ].join("");
  return `cron \`${schedule.expression}\` in ${schedule.timezone}${bounds}`;
}

/** The next `count` runs of a schedule after `nowMs`, as people read them. */
export function upcomingText(schedule: TaskSchedule, nowMs: number, count: number, zone: string): string[] {
  return nextOccurrences(schedule, nowMs, count).map((at) => formatIn(at, zone));
}

/** One line per task: id, what, where, schedule, next run, last result. */
export function taskLine(task: ScheduledTask, here: string | undefined, fallbackZone: string): string {
  const zone = zoneOf(task.schedule, fallbackZone);
  const quoted = `"${markdownLiteral(quoteOf(task.prompt))}"`;
  const what = task.kind === "wake" ? `wake-up: ${quoted}` : quoted;
  const where = postsIn(task, here);
  const next =
    task.status === "paused"
      ? `paused (${task.statusNote ?? "by a guard"})`
      : task.nextRunAt === undefined
        ? "no further runs"
        : `next ${formatIn(Date.parse(task.nextRunAt), zone)}`;
  const last =
    task.lastRunAt === undefined
      ? "not run yet"
      : `last ${formatIn(Date.parse(task.lastRunAt), zone)}: ${task.lastResult ?? "started"}`;
  return `- [${task.id}] ${what} — posts in ${where}; ${describeSchedule(task.schedule, zone)}; ${next}; ${last}`;
}

/** The listing of a person's tasks. */
export function taskLines(
  tasks: readonly ScheduledTask[],
  here: string | undefined,
  fallbackZone: string,
): readonly string[] {
  if (tasks.length === 0) return ["Scheduled tasks: none"];
  return [`Scheduled tasks (${tasks.length}):`, ...tasks.map((t) => taskLine(t, here, fallbackZone))];
}

/** What the approval card of schedule_task says: where it runs, when next, and then what runs. */
export function creationPreview(input: {
  readonly prompt: string;
  readonly schedule: TaskSchedule;
  readonly target: ThreadTarget;
  readonly zone: string;
  readonly nowMs: number;
}): { readonly summary: string; readonly detail: string } {
  const next = upcomingText(input.schedule, input.nowMs, 3, input.zone);
  // The task's text comes last: its own lines (it may hold "Where: …") cannot stand before the card's.
  const lines = [
    `Where: this conversation (${placeOf(input.target)})`,
    `Schedule: ${describeSchedule(input.schedule, input.zone)}`,
    next.length === 0 ? "Next: never (the schedule has no future time)" : `Next: ${next.join("; ")}`,
    `Runs: ${markdownLiteral(input.prompt)}`,
  ];
  return {
    summary: `schedule a task: "${markdownLiteral(quoteOf(input.prompt))}" ${describeSchedule(input.schedule, input.zone)}`,
    detail: lines.join("\n"),
  };
}

/** Longest reason a schedule_task card shows for a call that will be refused, in characters. */
const REFUSAL_SHOWN_CHARS = 400;

/**
 * What the approval card of schedule_task says of a call that will be refused: why, on one line of
 * literal text — the reason quotes the call's own arguments (a timezone, a time, a cron expression).
 */
export function refusalPreview(message: string): { readonly summary: string; readonly detail: string } {
  const reason = literalLine(message, REFUSAL_SHOWN_CHARS);
  return { summary: `schedule a task (will be refused: ${reason})`, detail: reason };
}

/**
 * What the approval card of cancel_scheduled_task says of the task it ends: which task or
 * wake-up, its text (capped) and the conversation it posts in, seen from the session `here` at
 * `asking` (a shared thread is not shown a conversation it could not see: postsIn).
 */
export function cancellationSummary(
  task: ScheduledTask,
  here: string | undefined,
  asking?: ThreadTarget,
): string {
  const where = postsIn(task, here, asking);
  const what = task.kind === "wake" ? "wake-up" : "task";
  return `cancel ${what} ${task.id}: "${markdownLiteral(quoteOf(task.prompt))}", which posts in ${where}`;
}

/**
 * What a run is handed: the marked input of a scheduled run (or a wake-up with its note). A note,
 * and a task's text no person approved, are introduced as the agent's own words.
 */
export function runInput(input: {
  readonly task: ScheduledTask;
  readonly dueMs: number;
  readonly skipped: number;
  readonly fallbackZone: string;
}): string {
  const { task, dueMs, skipped } = input;
  const zone = zoneOf(task.schedule, input.fallbackZone);
  const due = formatIn(dueMs, zone);
  const previous =
    task.lastRunAt === undefined ? "none (first run)" : formatIn(Date.parse(task.lastRunAt), zone);
  const quoted = task.prompt
    .split("\n")
    .map((line) => `> ${line}`)
    .join("\n");
  const missed =
    skipped > 0
      ? [
          `(${skipped} earlier run${skipped === 1 ? " was" : "s were"} missed while the service was down; only this one runs.)`,
        ]
      : [];
  if (task.kind === "wake")
    return [
      `[Wake-up ${task.id}: you asked to be woken at ${due}]`,
      "The note you left yourself (your own words, not a message from a person):",
      quoted,
      "",
      "Act on the note now, as far as it serves what the person asked; your reply is posted in this conversation.",
    ].join("\n");
  const by = task.createdBy.name || task.createdBy.id;
  return [
    `[Scheduled run of task ${task.id}, set up by ${by}]`,
    `Schedule: ${describeSchedule(task.schedule, zone)} · this run was due ${due} · previous run: ${previous}`,
    ...missed,
    ...(task.promptBy === "person"
      ? ["The task:", quoted, "", "Carry out the task now; your reply is posted in this conversation."]
      : [
          "The task, in your own words (you set it up; no person approved this text):",
          quoted,
          "",
          "Carry out the task now, as far as it serves what the person asked; your reply is posted in this conversation.",
        ]),
  ].join("\n");
}

/** The task's creator's direct-message conversation on its platform. */
export function dmOf(task: ScheduledTask): ThreadTarget {
  return { platform: task.target.platform, workspace: task.target.workspace, channel: task.createdBy.id };
}

/** "wake-up" or "task", as a notice names the task. */
export const kindOf = (task: ScheduledTask): string => (task.kind === "wake" ? "wake-up" : "task");

/** The most characters of a task's text a notice about it quotes. */
const NOTICE_PROMPT_CHARS = 80;

/**
 * A task's text as a notice about it (a pause) quotes it inside a sentence: on one line, at most
 * NOTICE_PROMPT_CHARS characters, the "…" marking a cut included, never half an emoji, escaped as
 * plain text so it never formats, links or mentions (literalLine: clipped before escaping, so a
 * cut never splits an escape).
 */
export function noticeExcerpt(task: Pick<ScheduledTask, "prompt">): string {
  return literalLine(task.prompt, NOTICE_PROMPT_CHARS);
}

/** The most characters a task's lastResult (and its statusNote) keeps. */
const LAST_RESULT_CHARS = 200;

/** A task's lastResult (or statusNote) as stored: `text` clipped to LAST_RESULT_CHARS. */
export function clipResult(text: string): string {
  return clip(text, LAST_RESULT_CHARS);
}
