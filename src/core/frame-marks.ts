/**
 * Text that looks like a frame's mark, made inert. Untrusted text set inside a frame of marks (a
 * fetched page's `<untrusted_web_content …>`, a skill's `<skill-instructions>`) must not close the
 * frame early nor open one of its own in a form a reader might take for a mark, so every mark-like
 * text in it has its `<` written `&lt;`. Mark-like is `<`, `＜` or `﹤`, an optional `/` or `／`,
 * the name's words joined by `_`, `-`, spaces or nothing, in any case (long ſ is an s), with
 * invisible characters (Unicode format characters — zero-width spaces, soft hyphens, bidi controls
 * — and NUL) anywhere in it. The text's own invisible characters elsewhere stay: joiners belong to
 * emoji and to scripts.
 */

/** Invisible characters text may hide inside a mark: format characters, and NUL. */
const INVISIBLE = "[\\p{Cf}\\0]*";

/** `word` with any invisible characters between its letters. */
const spelled = (word: string): string => [...word].join(INVISIBLE);

/** What may come between the mark's parts: spaces and invisible characters (one class, so a run is tried once). */
const GAP = "[\\s\\p{Cf}\\0]*";

/** What may join the mark's words. */
const JOIN = "[-_\\s\\p{Cf}\\0]*";

/**
 * The start of a mark named `name` (letters, its words split by `-` or `_`) as text might write it
 * (see the header), the part after the `<` captured. Each run between fixed characters is one
 * character class, so it is tried once and the match runs in linear time.
 */
export function markLike(name: string): RegExp {
  const words = name.split(/[-_]/).map(spelled).join(JOIN);
  return new RegExp(`[<＜﹤](${GAP}(?:[/／]${GAP})?${words})`, "giu");
}

/** `text` with every match of `pattern` (from markLike) made inert: its `<` written `&lt;`. */
export function neutraliseMarks(text: string, pattern: RegExp): string {
  return text.replace(pattern, "&lt;$1");
}
