/**
 * Showing the characters that hide or reorder text. People decide on what cards and status lines
 * show, and much of it is written by the model: a command with a bidirectional override ("Trojan
 * Source") reads in a different order than it runs, and zero-width characters hide where words
 * break. Each such character is shown as its code point instead.
 */

/**
 * Characters that change how the text around them is displayed without showing themselves: the
 * bidirectional embeddings, overrides, isolates and marks, and the zero-width space, word joiner
 * and byte-order mark. The zero-width joiners that emoji and some scripts need are left alone.
 */
const HIDDEN = /[\u061C\u200B\u200E\u200F\u202A-\u202E\u2060\u2066-\u2069\uFEFF]/g;

/** `text` with every hidden character shown as `⟨U+XXXX⟩`. */
export function revealHidden(text: string): string {
  return text.replace(
    HIDDEN,
    (char) => `⟨U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}⟩`,
  );
}
