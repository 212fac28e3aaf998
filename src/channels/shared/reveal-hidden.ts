/**
 * Showing the characters that hide or reorder text (core/hidden-characters.ts). People decide on
 * what cards and status lines show, and much of it is written by the model, so each such
 * character is shown as its code point instead.
 */
import { HIDDEN_CHARACTERS } from "../../core/hidden-characters.js";

/** `text` with every hidden character shown as `⟨U+XXXX⟩`. */
export function revealHidden(text: string): string {
  return text.replace(
    HIDDEN_CHARACTERS,
    (char) => `⟨U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}⟩`,
  );
}
