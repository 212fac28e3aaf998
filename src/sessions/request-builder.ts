/**
 * Request builder: turns a session and one inbound message into the engine's immutable request
 * snapshot. The session's ThreadTarget travels in `metadata.target` (tools that post, schedule or
 * subscribe read it from there), a subscription wake-up's provenance in `metadata.channelContent`
 * (which makes every non-read call of the turn ask a person), and the mark of a turn started by the
 * agent's own note in `metadata.agentNote` (core/agent-note.ts). The prompt is the person's words
 * alone: the files the message brought are listed beside them as saved-file records, with the
 * channel's notes about them (core/attachment.ts), and the engine shows both in a service block
 * after the words (engine/outbound.ts) — a file's name is its sender's choice, not the person's
 * words.
 */
import type { Attachment, SavedFileAttachment } from "../core/attachment.js";
import { frozenFields } from "../core/deep-freeze.js";
import type { ConversationMessage } from "../core/messages.js";
import {
  type ConversationExecutionRequest,
  createRequest,
  requestFromJSON,
  withMessages,
  withMode,
} from "../core/request.js";
import type { ThreadTarget } from "../core/thread-target.js";
import type { QueuedMessage, SessionRecord } from "./session-record.js";

export interface RequestSettings {
  readonly workspace: { readonly root: string; readonly context: string };
  readonly maxSteps: number;
}

/**
 * The attachment records a message's turn carries: a saved-file record per file it brought, then
 * its own records (images, files' text, the service's notes about its files).
 */
export function attachmentsOf(message: Pick<QueuedMessage, "files" | "attachments">): readonly Attachment[] {
  const own = message.attachments ?? [];
  if (message.files.length === 0) return own;
  const saved = message.files.map(
    (file): SavedFileAttachment => ({
      kind: "saved-file",
      path: file.path,
      name: file.name,
      bytes: file.bytes,
    }),
  );
  return [...saved, ...own];
}

/** Where on the platform the thread is: the channel may say so in `extra.surface`. */
export function surfaceOf(target: ThreadTarget): string {
  const declared = target.extra?.surface;
  if (typeof declared === "string" && declared.length > 0) return declared;
  return target.thread === undefined ? "channel" : "thread";
}

/** The snapshot for a new turn of `record` answering `message`. */
export function buildTurnRequest(input: {
  readonly record: SessionRecord;
  readonly message: QueuedMessage;
  readonly history: readonly ConversationMessage[];
  readonly settings: RequestSettings;
  readonly turnId: string;
}): ConversationExecutionRequest {
  const { record, message, settings } = input;
  return createRequest({
    prompt: message.text,
    attachments: attachmentsOf(message),
    messages: input.history,
    sessionId: record.id,
    turnId: input.turnId,
    platform: record.target.platform,
    surface: surfaceOf(record.target),
    provider: record.provider,
    model: record.model,
    title: record.title,
    workspace: settings.workspace,
    requester: { userId: message.user.id, displayName: message.user.name },
    maxSteps: settings.maxSteps,
    mode: record.mode,
    // Built here, so frozen in place: the snapshot takes it as it is rather than copying it.
    metadata: frozenFields({
      target: record.target,
      sentAt: message.sentAt,
      files: message.files,
      ...(message.channelContent ? { channelContent: message.channelContent } : {}),
      ...(message.scheduledRun ? { scheduledRun: message.scheduledRun } : {}),
      ...(message.agentNote ? { agentNote: true } : {}),
    }),
  });
}

/**
 * The snapshot of a persisted pending turn, with the session's current history and mode: the mode
 * it was stored with is the one the turn started in, and a `/mode` or an approved plan since then
 * (both saved to the record) is the resumed turn's mode for its later steps. The calls still
 * waiting are decided in the stricter of it and the mode their step was proposed in
 * (tool-scheduler.ts), so a plan approved beside them does not loosen them.
 */
export function rebuildTurnRequest(
  stored: Readonly<Record<string, unknown>>,
  session: { readonly history: readonly ConversationMessage[]; readonly record: Pick<SessionRecord, "mode"> },
): ConversationExecutionRequest {
  return withMode(withMessages(requestFromJSON(stored), session.history), session.record.mode);
}
