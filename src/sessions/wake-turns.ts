/**
 * Wake turns: turns the session layer starts without a person writing in the thread — a channel
 * subscription's batch of new messages, or a scheduled task's run. A wake turn is queued like a message (so it survives a
 * restart and never mixes into a running turn), with the subscribing person as requester and the
 * channel content's provenance on the request (for a subscription), which makes every non-read
 * tool call of the turn ask a person whatever the mode or grants; a retry of such a turn keeps
 * that provenance. A scheduled run carries its task instead, so its result can be reported, and
 * — when its text is the agent's own (a wake-up's note, a task no person approved) — the
 * agent-note mark, so the turn's input is never taken for a person's request (core/agent-note.ts).
 */
import { z } from "zod";
import type { ConversationMessage } from "../core/messages.js";
import { type PlatformUser, type ThreadTarget, targetExtraSchema } from "../core/thread-target.js";
import { type ChannelContent, subscriptionIdSchema } from "../core/channel-content.js";
import { isAgentNote } from "../core/agent-note.js";
import { clipLine } from "../core/one-line.js";
import type { QueuedMessage, ScheduledRunMeta, SessionRecord } from "./session-record.js";

/** A turn to start (or queue) in a session on behalf of a subscription. */
export interface WakeTurn {
  /**
   * The session that set the item up (subscribed, scheduled); the turn runs in its thread's
   * current session — the one that replaced it, after a "new".
   */
  readonly sessionId: string;
  /** The session's thread, as the subscription recorded it (checked against the session). */
  readonly target: ThreadTarget;
  /** The turn's input: the channel content, marked as such, with the standing instructions. */
  readonly prompt: string;
  /** Whose standing request this turn serves (the person who subscribed or scheduled it). */
  readonly requester: PlatformUser;
  /** A subscription's wake-up: the input is untrusted channel content. */
  readonly channelContent?: ChannelContent;
  /** A scheduled task's run: the task it serves. */
  readonly scheduledRun?: ScheduledRunMeta;
  /** The input is the agent's own note (a wake-up it set, a task no person approved). */
  readonly agentNote?: boolean;
}

/** What became of a wake turn. */
export type WakeResult =
  | { readonly status: "started" | "queued" }
  /** The session is unknown, or not the thread's (a session "new" replaced is: see `sessionId`). */
  | { readonly status: "gone"; readonly reason: string }
  /** A scheduled run left out: an earlier run of its task still waits in the thread's queue. */
  | { readonly status: "skipped"; readonly reason: string }
  /**
   * Not started: the requester may no longer use the bot in that conversation (the app asks the
   * platform's access rules before a wake reaches the session layer: app/wake-access.ts).
   */
  | { readonly status: "refused"; readonly reason: string };

/**
 * Why a scheduled run is left out of `record`'s queue, or undefined when it is not: an earlier run
 * of the same task still waits there (the thread is busy — say parked at an approval — and a
 * frequent task would otherwise stack one turn per occurrence behind it).
 */
export function waitingRunOf(record: Pick<SessionRecord, "queue">, turn: WakeTurn): string | undefined {
  const taskId = turn.scheduledRun?.taskId;
  const waiting = taskId && record.queue.find((message) => message.scheduledRun?.taskId === taskId);
  return waiting
    ? `its run due ${waiting.scheduledRun?.dueAt} has not started yet (the conversation is busy)`
    : undefined;
}

const text = z.string().min(1).max(200);

/** Validates a wake turn at the session layer's boundary. */
export const wakeTurnSchema = z.object({
  sessionId: z.string().min(1).max(180),
  target: z.object({
    platform: text,
    workspace: z.string().max(200),
    channel: z.string().max(200),
    thread: z.string().max(200).optional(),
    extra: targetExtraSchema.optional(),
  }),
  prompt: z.string().min(1).max(200_000),
  requester: z.object({ id: text, name: z.string().max(200) }),
  channelContent: z
    .object({
      channel: z.string().max(400),
      quote: z.string().max(2_000),
      subscriptionId: subscriptionIdSchema.optional(),
    })
    .optional(),
  scheduledRun: z.object({ taskId: z.string().min(1).max(40), dueAt: z.iso.datetime() }).optional(),
  agentNote: z.boolean().optional(),
});

/** A copy of a wake turn's provenance, its fields only. */
function channelContentOf({ channel, quote, subscriptionId }: ChannelContent): ChannelContent {
  return { channel, quote, ...(subscriptionId === undefined ? {} : { subscriptionId }) };
}

/** The queue entry of a wake turn, sent at `sentAt`. */
export function queuedWake(turn: WakeTurn, sentAt: string): QueuedMessage {
  return {
    user: turn.requester,
    text: turn.prompt,
    files: [],
    sentAt,
    ...(turn.channelContent ? { channelContent: channelContentOf(turn.channelContent) } : {}),
    ...(turn.scheduledRun
      ? { scheduledRun: { taskId: turn.scheduledRun.taskId, dueAt: turn.scheduledRun.dueAt } }
      : {}),
    ...(turn.agentNote ? { agentNote: true } : {}),
  };
}

/** Characters of an earlier untrusted input quoted when its turn is retried. */
const RETRY_QUOTE_CHARS = 200;

/** The user message that opened the session's latest turn (steering a person added does not count). */
export function openingMessage(
  history: readonly ConversationMessage[],
): Extract<ConversationMessage, { role: "user" }> | undefined {
  for (let i = history.length - 1; i >= 0; i--) {
    const message = history[i];
    if (message?.role === "user" && message.meta?.steered !== true) return message;
  }
  return undefined;
}

/** How a retry of the session's latest turn must run: on the channel content it ran on, if any, and as the agent's own note when that started it. */
export interface LastTurnOrigin {
  readonly channelContent?: ChannelContent;
  readonly agentNote: boolean;
}

/**
 * What a retry of the session's latest turn keeps of it, from one look at its history: the
 * provenance it must run on — the turn's own, as the record holds it, or, for records written
 * before turns carried it, quoted from the turn's opening user message when that was untrusted
 * channel content (steering a person added during the turn does not count) — and whether the
 * agent's own note started the turn (its opening user message is stored marked as the agent's note).
 */
export function lastTurnOrigin(
  record: Pick<SessionRecord, "lastTurnChannelContent">,
  history: readonly ConversationMessage[],
): LastTurnOrigin {
  const opening = openingMessage(history);
  const channelContent = record.lastTurnChannelContent ?? quotedProvenance(opening);
  return {
    ...(channelContent ? { channelContent } : {}),
    agentNote: opening !== undefined && isAgentNote(opening),
  };
}

/** The provenance of a turn opened by `opening`, quoted from it, when that was untrusted channel content. */
function quotedProvenance(
  opening: Extract<ConversationMessage, { role: "user" }> | undefined,
): ChannelContent | undefined {
  if (opening?.meta?.untrusted !== true) return undefined;
  const quote = clipLine(opening.content, RETRY_QUOTE_CHARS);
  return { channel: "a watched channel (retrying the turn it started)", quote };
}
