/**
 * The characters that hide or reorder text without showing themselves, in one set for every
 * place that shows text people decide on: the channels show them as code points (reveal-hidden.ts)
 * and save_skill refuses them in a bundled path its card shows. A command with a bidirectional
 * override ("Trojan Source") reads in a different order than it runs, and zero-width characters
 * hide where words break.
 */

/**
 * The bidirectional embeddings, overrides, isolates and marks, and the zero-width space, word
 * joiner and byte-order mark. The zero-width joiners that emoji and some scripts need are left
 * alone. Global, for `String.replace`.
 */
export const HIDDEN_CHARACTERS = /[\u061C\u200B\u200E\u200F\u202A-\u202E\u2060\u2066-\u2069\uFEFF]/g;

/** Whether `text` holds a character of HIDDEN_CHARACTERS. */
export function hidesText(text: string): boolean {
  return text.search(HIDDEN_CHARACTERS) !== -1;
}
