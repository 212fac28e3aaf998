/**
 * HTML character references (`&amp;`, `&#39;`, `&#x1F600;`): markdown allows them in text and
 * Telegram HTML uses them for escaping, so both the markdown formats and the Telegram splitter
 * resolve them. Each caller names the named references it knows.
 */

/** The named references of HTML's own escaping, which every caller knows. */
export const BASIC_ENTITIES: Readonly<Record<string, string>> = Object.freeze({
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
});

/** Replace numeric references and the given named ones by their characters; others stay as written. */
export function decodeEntities(
  text: string,
  named: Readonly<Record<string, string>> = BASIC_ENTITIES,
): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, ref: string) => {
    if (ref.startsWith("#")) {
      const code =
        ref[1] === "x" || ref[1] === "X" ? Number.parseInt(ref.slice(2), 16) : Number(ref.slice(1));
      return Number.isInteger(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return named[ref.toLowerCase()] ?? whole;
  });
}
