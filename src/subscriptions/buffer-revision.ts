/**
 * Buffer revisions: what a message's edit or deletion on the platform does to the entries a
 * channel buffer holds for it. A deleted message leaves the buffer (a pasted secret must not be
 * shown by catch_up for days); an edited one keeps its place (seq, time, author) and takes the new
 * text. Kept apart from ChannelBuffer, which finds the page and stores it, so the rule on one
 * page's entries is pure and in one place.
 */
import { type BufferEntry, capEntryText } from "./buffer-entry.js";

/** An edit's new content, or undefined for a deletion. */
export interface EntryEdit {
  readonly text: string;
  /** Whether the edited text mentions the bot (kept so mention triggers can be re-run after a restart). */
  readonly mentionsBot: boolean;
}

/**
 * `entries` with message `id` deleted (`edit` undefined) or given the edit's text (capped at
 * `maxChars`); "absent" when they do not hold it, "unchanged" when the edit changes nothing.
 */
export function revisedEntries(
  entries: readonly BufferEntry[],
  id: string,
  edit: EntryEdit | undefined,
  maxChars: number,
): BufferEntry[] | "absent" | "unchanged" {
  const at = entries.findIndex((entry) => entry.id === id);
  if (at === -1) return "absent";
  const old = entries[at]!;
  if (edit === undefined) return entries.filter((_, i) => i !== at);
  const { mentionsBot: _old, ...rest } = old;
  const revised = capEntryText(
    { ...rest, text: edit.text, ...(edit.mentionsBot ? { mentionsBot: true } : {}) },
    maxChars,
  );
  if (revised.text === old.text && revised.mentionsBot === old.mentionsBot) return "unchanged";
  return entries.map((entry, i) => (i === at ? revised : entry));
}
