/**
 * What a turn writes into its session's record: the marker that says a turn is in progress (the
 * recovery point after a crash) when it starts, and its usage when it ends. Pure
 * functions of the record, so the scheduler only decides when to apply them.
 */
import { addUsage, type ConversationMessage, type TokenUsage } from "../core/messages.js";
import { type ConversationExecutionRequest, requestToJSON, withMessages } from "../core/request.js";
import { type QueuedMessage, type SessionRecord, ZERO_USAGE } from "./session-record.js";

const TITLE_CHARS = 80;
/** The marker's request holds no history: frozen already, so the marker shares it rather than copying it. */
const NO_MESSAGES: readonly ConversationMessage[] = Object.freeze([]);

/** How a turn came about: a message run, or a retry of the last one. */
export interface TurnStart {
  readonly message: QueuedMessage;
  readonly how: "run" | "retry";
  readonly request: ConversationExecutionRequest;
  readonly startedAt: string;
  /** Messages in the history when the turn started. */
  readonly historyLength: number;
}

/**
 * The record with `start` in progress: the message leaves the queue (its dedupe keys move to the
 * marker), the marker holds the request without its history, and a first run names the session.
 * The turn's provenance and requester are kept for a retry of it (retry-requester.ts). Who started the session is set when it is created (SessionCache), never by a turn.
 */
export function withTurnStarted(record: SessionRecord, start: TurnStart): SessionRecord {
  const { message, how, request } = start;
  const { dedupeKeys } = message;
  return {
    ...record,
    lastTurnChannelContent: message.channelContent,
    lastTurnRequester: message.user,
    title: record.title || message.text.trim().slice(0, TITLE_CHARS),
    turns: how === "run" ? record.turns + 1 : record.turns,
    queue: record.queue.includes(message) ? record.queue.filter((m) => m !== message) : record.queue,
    pendingTurn: {
      turnId: request.turnId,
      request: requestToJSON(withMessages(request, NO_MESSAGES)),
      startedAt: start.startedAt,
      startedFrom: { how, historyLength: start.historyLength },
      ...(message.targetExtra === undefined ? {} : { targetExtra: message.targetExtra }),
      ...(dedupeKeys?.length ? { dedupeKeys } : {}),
    },
  };
}

/**
 * The record with its turn ended: no marker, the turn's usage added. The files the turn downloaded
 * are not part of it: they went to the session's download log as they came (downloaded-files.ts).
 */
export function withTurnFinished(record: SessionRecord, usage: TokenUsage | undefined): SessionRecord {
  return { ...record, pendingTurn: undefined, usage: addUsage(record.usage, usage) ?? ZERO_USAGE };
}
