/**
 * SessionRecord: the persisted state of one session (everything but its history, which lives in
 * the history log, and its downloaded files, in their own: download-log.ts): thread target, mode,
 * model, grants, title, usage totals, the follow-up queue, and the marker of a turn in progress
 * with its request snapshot for durable resume.
 * Stored schema-versioned in the "sessions" space under `rec:<id>` (SessionRecords, session-records.ts).
 */
import { z } from "zod";
import { type ChannelContent, channelContentSchema } from "../core/channel-content.js";
import { frozenCopy } from "../core/deep-freeze.js";
import { type TurnMarker, turnMarkerSchema } from "../approvals/parked-turn.js";
import { type Attachment, attachmentSchema } from "../core/attachment.js";
import { grantSchema, type Grant } from "../engine/permissions/grants.js";
import type { ConversationMessage, TokenUsage } from "../core/messages.js";
import { type PermissionMode, permissionModeSchema } from "../core/modes.js";
import type { InboundFile, InboundMessage } from "../core/inbound-message.js";
import {
  type PlatformUser,
  storedTargetSchema,
  type ThreadTarget,
  targetExtraSchema,
} from "../core/thread-target.js";

export const SESSION_RECORD_KIND = "session";

/** An inbound message accepted but not yet started as a turn. */
export interface QueuedMessage {
  readonly user: PlatformUser;
  readonly text: string;
  readonly files: readonly InboundFile[];
  /** Images among the files, and the text read from files (see InboundMessage). */
  readonly attachments?: readonly Attachment[];
  readonly sentAt: string;
  /** Sent into a running turn as steering; dropped once the engine takes it into the history. */
  readonly steered?: boolean;
  /** A subscription wake-up: the turn runs as untrusted channel content (channel and a quote of it). */
  readonly channelContent?: ChannelContent;
  /** A scheduled task's run (or a wake-up): the task it serves, told its result when the turn ends. */
  readonly scheduledRun?: ScheduledRunMeta;
  /** The text is the agent's own note, not a person's message (core/agent-note.ts). */
  readonly agentNote?: boolean;
  /**
   * The delivery's dedupe keys: a redelivery of a queued message is recognised from the queue, and
   * the keys are recorded as seen before the message leaves the queue.
   */
  readonly dedupeKeys?: readonly string[];
  /** The `target.extra` of the delivery (its reply-to message id…), handed to the turn's renderer. */
  readonly targetExtra?: TargetExtra;
}

/** The scheduled task a turn runs for (`request.metadata.scheduledRun`). */
export interface ScheduledRunMeta {
  readonly taskId: string;
  /** The occurrence this run serves (ISO). */
  readonly dueAt: string;
}

/** Platform details of one delivery's target (ThreadTarget's `extra`). */
export type TargetExtra = Readonly<Record<string, string | number | boolean>>;

/**
 * A session's record. A change clears an optional field by setting it to undefined (JSON leaves it
 * out), never by leaving it out of a rest pattern: V8 gives each object built from a rest pattern
 * and then extended a hidden class of its own, so every record version cost a new one (~0.5 KB,
 * and every read of a record went megamorphic).
 */
export interface SessionRecord {
  readonly id: string;
  readonly key: string;
  readonly target: ThreadTarget;
  readonly mode: PermissionMode;
  readonly provider: string;
  readonly model: string;
  readonly grants: readonly Grant[];
  readonly title: string;
  readonly usage: TokenUsage;
  readonly turns: number;
  /**
   * Only in records stored before the downloaded files moved to their own log (DownloadLog): a
   * session loaded with it folds it into the log, and its next save leaves it out (LiveSession).
   */
  readonly downloadedFiles?: readonly string[];
  readonly queue: readonly QueuedMessage[];
  /** The turn in progress (its marker): with the history, the turn's parked state (parked-turn.ts). */
  readonly pendingTurn?: TurnMarker;
  /**
   * The provenance of the session's latest turn, when it ran on channel content: a retry of that
   * turn stays untrusted whatever the history now ends with (steering a person added, say).
   */
  readonly lastTurnChannelContent?: ChannelContent;
  /**
   * Whom the session's latest turn ran for (its requester): a retry of that turn runs as them,
   * whoever presses Retry (retry-requester.ts). Absent on records from before it was kept.
   */
  readonly lastTurnRequester?: PlatformUser;
  /**
   * Who started the session: the person whose message or command created it. Absent only on
   * records from before it was kept, where loading fills it in (`withStarter`) when it can.
   */
  readonly startedBy?: PlatformUser;
  /** Who last set the session's mode, when a person did (shown by `status`). */
  readonly modeSetBy?: PlatformUser;
  /**
   * The sessions the thread's standing items (tasks, wake-ups, subscriptions, read positions) are
   * not all moved from yet: the one this one replaced ("new") and those its own mark still named.
   * Written with the switch itself, so a move cut short is finished later (standing-item-moves.ts);
   * `told` once the thread was told the move keeps failing.
   */
  readonly itemsFrom?: ItemsFrom;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/**
 * Where a session's standing items are still to be moved from (SessionRecord.itemsFrom): the
 * newest such session, and the older ones (`earlier`, oldest first) when a move that kept failing
 * was carried on by another "new". Kept in this shape (rather than one list) so that records
 * written before `earlier` existed read as they are, and a process that predates it still reads
 * the new ones (it moves `sessionId`'s items only).
 */
export interface ItemsFrom {
  readonly sessionId: string;
  readonly earlier?: readonly string[];
  readonly told?: boolean;
}

/**
 * At most how many sessions a mark names (MAX_ITEM_SOURCES − 1 in `earlier`): a mark grows by one
 * with each "new" typed while the moves keep failing, and is saved with every change of the
 * record. Past it `itemsFromReplacing` keeps the oldest ones — the sessions the thread used before
 * the moves began to fail, where its items were made — and the one just replaced.
 */
export const MAX_ITEM_SOURCES = 16;

/** The sessions a mark names, oldest first (each once). */
export function itemSources(from: ItemsFrom): readonly string[] {
  return [...new Set([...(from.earlier ?? []), from.sessionId])];
}

/** The mark naming `sources` (oldest first), `told` or not; undefined when there are none. */
export function itemsFromOf(sources: readonly string[], told = false): ItemsFrom | undefined {
  const sessionId = sources.at(-1);
  if (sessionId === undefined) return undefined;
  const earlier = sources.slice(0, -1);
  return { sessionId, ...(earlier.length > 0 ? { earlier } : {}), ...(told ? { told: true } : {}) };
}

/**
 * The mark of a session that replaces `previous` ("new"): `previous`, and the sessions whose
 * items had not all reached it yet — carried on, or they would never reach the thread's current
 * session. Not yet told: this switch's move has not failed. `dropped`: the sessions left out past
 * MAX_ITEM_SOURCES (see there), to be reported.
 */
export function itemsFromReplacing(previous: SessionRecord): {
  readonly itemsFrom: ItemsFrom;
  readonly dropped: readonly string[];
} {
  const carried = (previous.itemsFrom ? itemSources(previous.itemsFrom) : []).filter(
    (id) => id !== previous.id,
  );
  const earlier = carried.slice(0, MAX_ITEM_SOURCES - 1);
  return {
    itemsFrom: { sessionId: previous.id, ...(earlier.length > 0 ? { earlier } : {}) },
    dropped: carried.slice(earlier.length),
  };
}

const user = z.object({ id: z.string(), name: z.string() });

/**
 * `next`, a change's result, as the record's new version: stamped `updatedAt` and frozen. A change
 * builds a new record (or hands back the current one, frozen), so a new one is stamped in place
 * rather than copied again.
 */
export function stampedVersion(next: SessionRecord, updatedAt: string): SessionRecord {
  return Object.freeze(Object.isFrozen(next) ? { ...next, updatedAt } : Object.assign(next, { updatedAt }));
}

/** Validates a record read back from the store. */
export const sessionRecordSchema = z.object({
  id: z.string().min(1),
  key: z.string().min(1),
  target: storedTargetSchema,
  mode: permissionModeSchema,
  provider: z.string(),
  model: z.string(),
  grants: z.array(grantSchema),
  title: z.string(),
  usage: z.object({
    inputTokens: z.number().nonnegative(),
    outputTokens: z.number().nonnegative(),
    totalTokens: z.number().nonnegative(),
  }),
  turns: z.number().int().nonnegative(),
  downloadedFiles: z.array(z.string()).optional(),
  queue: z.array(
    z.object({
      user,
      text: z.string(),
      files: z.array(z.object({ path: z.string(), name: z.string(), bytes: z.number() })),
      attachments: z.array(attachmentSchema).optional(),
      sentAt: z.string(),
      steered: z.boolean().optional(),
      channelContent: channelContentSchema.optional(),
      scheduledRun: z.object({ taskId: z.string(), dueAt: z.string() }).optional(),
      agentNote: z.boolean().optional(),
      dedupeKeys: z.array(z.string()).optional(),
      targetExtra: targetExtraSchema.optional(),
    }),
  ),
  pendingTurn: turnMarkerSchema.optional(),
  lastTurnChannelContent: channelContentSchema.optional(),
  lastTurnRequester: user.optional(),
  startedBy: user.optional(),
  modeSetBy: user.optional(),
  itemsFrom: z
    .object({
      sessionId: z.string().min(1),
      earlier: z.array(z.string().min(1)).optional(),
      told: z.boolean().optional(),
    })
    .optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const ZERO_USAGE: TokenUsage = Object.freeze({ inputTokens: 0, outputTokens: 0, totalTokens: 0 });

/** A fresh record for a new session (its target copied deep-frozen, so request snapshots share it). */
export function newSessionRecord(input: {
  readonly id: string;
  readonly target: ThreadTarget;
  readonly key: string;
  readonly mode: PermissionMode;
  readonly provider: string;
  readonly model: string;
  readonly now: Date;
  /** Who started the thread's conversation, when this session replaces an earlier one ("new"). */
  readonly startedBy?: PlatformUser | undefined;
  /** Who set `mode`, when this session keeps the mode of the one it replaces. */
  readonly modeSetBy?: PlatformUser | undefined;
  /** Where the standing items are to be moved here from, when this session replaces one ("new"). */
  readonly itemsFrom?: ItemsFrom | undefined;
}): SessionRecord {
  const at = input.now.toISOString();
  return Object.freeze({
    id: input.id,
    key: input.key,
    target: frozenCopy(input.target),
    mode: input.mode,
    provider: input.provider,
    model: input.model,
    grants: [],
    title: "",
    usage: ZERO_USAGE,
    turns: 0,
    queue: [],
    ...(input.startedBy ? { startedBy: input.startedBy } : {}),
    ...(input.modeSetBy ? { modeSetBy: input.modeSetBy } : {}),
    ...(input.itemsFrom ? { itemsFrom: input.itemsFrom } : {}),
    createdAt: at,
    updatedAt: at,
  });
}

/**
 * `record` with its starter, by the one rule for records stored before `startedBy` was kept: the
 * author of its history's first user message a person wrote (`meta.by`), named as the record
 * knows them (who set the mode, a queued message) or by their id. With no such message the
 * session stays ownerless, and what only its starter may do then needs a configured approver
 * (session-commands.ts): it is never claimed by whoever comes first. A record that has a starter
 * is returned as it is.
 */
export function withStarter(record: SessionRecord, history: readonly ConversationMessage[]): SessionRecord {
  if (record.startedBy) return record;
  const by = history.find((m) => m.role === "user" && typeof m.meta?.by === "string")?.meta?.by;
  if (by === undefined) return record;
  const known = [record.modeSetBy, ...record.queue.map((m) => m.user)].find((u) => u?.id === by);
  return Object.freeze({ ...record, startedBy: { id: by, name: known?.name ?? by } });
}

/** The queue entry of an inbound message delivered under `dedupeKeys`. */
export function queuedMessageOf(message: InboundMessage, dedupeKeys: readonly string[]): QueuedMessage {
  const { user, text, files, sentAt, attachments } = message;
  const extra = message.target.extra;
  return {
    user,
    text,
    files,
    ...(attachments?.length ? { attachments } : {}),
    sentAt,
    ...(dedupeKeys.length > 0 ? { dedupeKeys } : {}),
    ...(extra === undefined ? {} : { targetExtra: extra }),
  };
}

/**
 * The most messages a session's queue holds (follow-ups and steering not yet taken): past it a
 * message is refused, so a flood into one thread cannot grow its record, every save of it and
 * the turns it owes without bound.
 */
export const MAX_QUEUED_MESSAGES = 50;

/** Whether a record has work that must survive a restart: a turn in progress or queued messages. */
export function hasPendingWork(record: SessionRecord): boolean {
  return record.pendingTurn !== undefined || record.queue.length > 0;
}
