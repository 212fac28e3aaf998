/**
 * The files the requester's messages in a turn came with, named for those who decide on its
 * calls: the safety reviewer (reviewer/review-input.ts) and the person on the approval card
 * (approvals/). A file's text reaches the model apart from the person's words (engine/outbound.ts),
 * but it is still in the turn and may have steered a call, so both are told the files' names —
 * never their text. The turn's files are those of the message that started it and of every
 * message the requester sent into it while it ran (steering) or answered a question with (ask_user):
 * a card raised after a steering message or an answer names its files too. They are read from one place, the turn's history, where
 * every message keeps the files it came with (saved-file records): also the first message of a
 * retried turn, whose request lists none.
 */
import { type Attachment, isSavedFile } from "../core/attachment.js";
import type { ConversationMessage } from "../core/messages.js";
import { oneLine } from "../core/one-line.js";
import { clip } from "../core/surrogate-pairs.js";

/** Names shown at most; the rest are counted. */
const MAX_NAMES = 10;
/** Characters of one name shown at most. */
const NAME_CHARS = 80;

function shown(name: string): string {
  return clip(oneLine(name), NAME_CHARS);
}

/** The attachments of the requester's own message or typed answer (ask_user); none for others. */
function requesterAttachments(message: ConversationMessage, requester: string): readonly Attachment[] {
  if (message.meta?.by !== requester) return [];
  if (message.role === "tool" || (message.role === "user" && message.meta?.untrusted !== true))
    return message.attachments ?? [];
  return [];
}

/**
 * The names of the files the requester's messages in the turn the history ends in came with (the
 * saved-file records of its first message — the last user message that was not sent into a
 * running turn — and of those they sent into it while it ran), as "report.pdf, notes.txt";
 * undefined when they came with none. A file on two messages is named once.
 */
export function attachedFilesOf(
  history: readonly ConversationMessage[],
  requester: string,
): string | undefined {
  const start = history.findLastIndex((m) => m.role === "user" && m.meta?.steered !== true);
  const files = new Map<string, string>();
  for (const message of history.slice(Math.max(start, 0)))
    for (const attachment of requesterAttachments(message, requester))
      if (isSavedFile(attachment) && !files.has(attachment.path)) files.set(attachment.path, attachment.name);
  if (files.size === 0) return undefined;
  const names = [...files.values()].slice(0, MAX_NAMES).map(shown);
  const more = files.size - names.length;
  return more > 0 ? `${names.join(", ")} and ${more} more` : names.join(", ");
}
