/**
 * Cutting text between whole characters. A character outside the Basic Multilingual Plane (most
 * emoji) is two UTF-16 units; a cut between them leaves half a character, which platforms reject
 * or show as garbage. Every cut that cares asks this one question, and the usual cuts are written
 * here once: text kept within a length, "…" marking what was left off (`clip`), and text kept to a
 * length with a caller's own marker after it, told how much was really left off
 * (`clipWithMarker`).
 */

/** Whether a cut of `text` at `index` falls between the two halves of a surrogate pair. */
export function splitsSurrogatePair(text: string, index: number): boolean {
  if (index <= 0 || index >= text.length) return false;
  const before = text.charCodeAt(index - 1);
  return before >= 0xd800 && before <= 0xdbff;
}

/** `index`, moved one unit back when a cut there would split a surrogate pair (a cut that must not grow). */
export function cutBeforeCharacter(text: string, index: number): number {
  return splitsSurrogatePair(text, index) ? index - 1 : index;
}

/** `index`, moved one unit on when a cut there would split a surrogate pair. */
export function cutBetweenCharacters(text: string, index: number): number {
  return splitsSurrogatePair(text, index) ? index + 1 : index;
}

/**
 * `text` of at most `max` characters (UTF-16 units), ending in "…" when cut; "" when cut to
 * `max` <= 0, where even the "…" would not fit. Never splits a character.
 */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= 0) return "";
  return `${text.slice(0, cutBeforeCharacter(text, max - 1))}…`;
}

/**
 * `text` cut to its first `keep` characters (UTF-16 units; one fewer when the cut would split a
 * character) followed by `marker(dropped)`, where `dropped` is how many characters were really
 * left off; `text` itself when it is no longer than `keep`. The marker comes on top of `keep`, and
 * `keep` <= 0 keeps nothing but the marker.
 */
export function clipWithMarker(text: string, keep: number, marker: (dropped: number) => string): string {
  if (text.length <= Math.max(0, keep)) return text;
  const end = cutBeforeCharacter(text, Math.max(0, keep));
  return text.slice(0, end) + marker(text.length - end);
}
