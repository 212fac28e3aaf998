/**
 * Text that looks like a frame's mark, made inert. Untrusted text set inside a frame of marks (a
 * fetched page's `<untrusted_web_content …>`, a skill's `<skill-instructions>`) must not close the
 * frame early nor open one of its own in a form a reader might take for a mark, so every mark-like
 * text in it has its opener written `&lt;`. Mark-like is an opener (`<` or a look-alike such as
 * `＜ ﹤ ‹ 〈 ⟨`: OPENER), an optional slash (`/` or a look-alike such as `／ ∕ ⁄ ⧸`), the name's
 * words joined by `_`, `-`, spaces or nothing, in any case (long ſ is an s), with invisible
 * characters anywhere in it: Unicode format characters (zero-width spaces, soft hyphens, bidi
 * controls), combining marks (which sit on the character before them), default-ignorable code
 * points (the combining grapheme joiner, variation selectors, Hangul fillers) and NUL. The text's
 * own invisible characters elsewhere stay: joiners belong to emoji and to scripts.
 */

/** Characters a reader may take for a mark's `<`. */
export const OPENER = "[<＜﹤‹〈\u2329⟨❮˂ᐸ⧼]";

/** Characters a reader may take for a mark's `/`. */
const SLASH = "[/／∕⁄⧸⟋╱]";

/** Invisible characters: format characters, combining marks, default-ignorables, NUL (no quantifier). */
const HIDDEN = "\\p{Cf}\\p{M}\\p{Default_Ignorable_Code_Point}\\0";

/** Invisible characters text may hide inside a mark's word. */
const INVISIBLE = `[${HIDDEN}]*`;

/** `word` with any invisible characters between its letters. */
const spelled = (word: string): string => [...word].join(INVISIBLE);

/** What may come between the mark's parts: spaces and invisible characters (one class, so a run is tried once). */
const GAP = `[\\s${HIDDEN}]*`;

/** What may join the mark's words. */
const JOIN = `[-_\\s${HIDDEN}]*`;

/**
 * The start of a mark named `name` (letters, its words split by `-` or `_`) as text might write it
 * (see the header), the part after the opener captured. Each run between fixed characters is one
 * character class, so it is tried once and the match runs in linear time.
 */
export function markLike(name: string): RegExp {
  const words = name.split(/[-_]/).map(spelled).join(JOIN);
  return new RegExp(`${OPENER}(${GAP}(?:${SLASH}${GAP})?${words})`, "giu");
}

/** `text` with every match of `pattern` (from markLike) made inert: its opener written `&lt;`. */
export function neutraliseMarks(text: string, pattern: RegExp): string {
  return text.replace(pattern, "&lt;$1");
}
