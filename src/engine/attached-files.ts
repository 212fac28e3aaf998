/**
 * The files the requester's messages in a turn came with, named for those who decide on its
 * calls: the safety reviewer (reviewer/review-input.ts) and the person on the approval card
 * (approvals/). A file's text reaches the model apart from the person's words (engine/outbound.ts),
 * but it is still in the turn and may have steered a call, so both are told the files' names —
 * never their text. The turn's files are those of the message that started it and of every
 * message the requester sent into it while it ran (steering): a card raised after a steering
 * message names that message's files too.
 */
import { isSavedFile } from "../core/attachment.js";
import type { ConversationMessage } from "../core/messages.js";
import { oneLine } from "./outbound.js";

/** Names shown at most; the rest are counted. */
const MAX_NAMES = 10;
/** Characters of one name shown at most. */
const NAME_CHARS = 80;

function shown(name: string): string {
  const flat = oneLine(name);
  return flat.length <= NAME_CHARS ? flat : `${flat.slice(0, NAME_CHARS - 1)}…`;
}

/** One file a turn's messages came with. */
interface TurnFile {
  readonly path: string;
  readonly name: string;
}

/** The files in a request's `metadata.files` (request-builder.ts): the turn's first message's. */
function requestFiles(metadata: Readonly<Record<string, unknown>>): TurnFile[] {
  const files = metadata.files;
  if (!Array.isArray(files)) return [];
  return files.map((file) => {
    const { path, name } = (file ?? {}) as { path?: unknown; name?: unknown };
    return { path: String(path ?? ""), name: String(name ?? "a file") };
  });
}

/**
 * The files listed (saved-file records) on the requester's messages of the turn the history ends
 * in: from its first message (the last user message that was not sent into a running turn) on.
 */
function historyFiles(history: readonly ConversationMessage[], requester: string): TurnFile[] {
  const start = history.findLastIndex((m) => m.role === "user" && m.meta?.steered !== true);
  const found: TurnFile[] = [];
  for (const message of history.slice(Math.max(start, 0)))
    if (message.role === "user" && message.meta?.by === requester && message.meta?.untrusted !== true)
      for (const attachment of message.attachments ?? [])
        if (isSavedFile(attachment)) found.push({ path: attachment.path, name: attachment.name });
  return found;
}

/**
 * The names of the files the requester's messages in this turn came with, as
 * "report.pdf, notes.txt"; undefined when they came with none. `metadata` is the request's (its
 * `files`: the turn's first message's, also for a turn stored before messages listed their
 * files); `history`, the turn's history so far, adds the files of the messages the requester
 * sent into the turn while it ran.
 */
export function attachedFilesOf(
  metadata: Readonly<Record<string, unknown>>,
  history: readonly ConversationMessage[] = [],
  requester = "",
): string | undefined {
  const seen = new Set<string>();
  const files: TurnFile[] = [];
  for (const file of [...requestFiles(metadata), ...historyFiles(history, requester)]) {
    if (file.path !== "" && seen.has(file.path)) continue;
    seen.add(file.path);
    files.push(file);
  }
  if (files.length === 0) return undefined;
  const names = files.slice(0, MAX_NAMES).map((file) => shown(file.name));
  const more = files.length - names.length;
  return more > 0 ? `${names.join(", ")} and ${more} more` : names.join(", ");
}
