/**
 * Whose a memory is, as the instructions, the approval cards and the refusals write it. A memory
 * is its author's — whoever first saved it (`createdBy`) — whatever changes it later: an
 * approver's edit is named beside the author (`editedBy`), never instead. The author's display
 * name is the one recorded at saving (`savedByName`), shown only when `savedBy` says it is the
 * author's: records changed by another member before that rule hold that member's name there, and
 * must not show it as the author's. One rendering for every place, so the prompt and the card
 * cannot name different people for one note.
 */
import { oneLine } from "../../core/one-line.js";

/** The longest id or display name shown (a display name comes from the chat platform). */
const MAX_NAME_CHARS = 64;

/** What authorship a memory records (a MemoryItem has all of it). */
export interface MemoryAuthorship {
  readonly createdBy: string;
  readonly savedBy?: string | undefined;
  readonly savedByName?: string | undefined;
  readonly editedBy?: string | undefined;
  readonly editedByName?: string | undefined;
}

/** A person on one line: "Name (user id U1)", or "user id U1" without a name; each part clipped. */
function personLine(userId: string, displayName: string | undefined): string {
  const id = oneLine(userId).trim().slice(0, MAX_NAME_CHARS);
  const name = oneLine(displayName ?? "")
    .trim()
    .slice(0, MAX_NAME_CHARS);
  return name ? `${name} (user id ${id})` : `user id ${id}`;
}

/** The memory's author on one line, their recorded name only when it is theirs (see the header). */
export function authorLine(item: MemoryAuthorship): string {
  return personLine(item.createdBy, item.savedBy === item.createdBy ? item.savedByName : undefined);
}

/** ", edited by <editor>" when a person other than the author last changed the memory, else "". */
export function editorNote(item: MemoryAuthorship): string {
  return item.editedBy === undefined ? "" : `, edited by ${personLine(item.editedBy, item.editedByName)}`;
}
