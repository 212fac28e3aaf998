/**
 * The fake Bot API's parse_mode "HTML" check: as strict as Telegram about tags (supported set,
 * balance, nesting order) and answering with Telegram's own error texts, so adapters meet
 * "can't parse entities" in tests exactly as they would in production.
 */

export type HtmlParse =
  | { readonly ok: true; readonly text: string }
  | { readonly ok: false; readonly description: string };

const SUPPORTED = new Set([
  "b",
  "strong",
  "i",
  "em",
  "u",
  "ins",
  "s",
  "strike",
  "del",
  "span",
  "tg-spoiler",
  "a",
  "code",
  "pre",
  "blockquote",
  "tg-emoji",
]);

const NAMED: Readonly<Record<string, string>> = { lt: "<", gt: ">", amp: "&", quot: '"' };

const TAG = /^<(\/?)([^\s>/]*)([^>]*)>/;
const ENTITY = /^&(#x[0-9a-fA-F]+|#\d+|[a-zA-Z]+);/;

function failure(reason: string): HtmlParse {
  return { ok: false, description: `Bad Request: can't parse entities: ${reason}` };
}

/** Parse Telegram HTML; on success the text a reader sees (tags removed, entities decoded). */
export function parseTelegramHtml(html: string): HtmlParse {
  const stack: string[] = [];
  let text = "";
  let index = 0;
  const offset = (at: number) => Buffer.byteLength(html.slice(0, at), "utf8");
  while (index < html.length) {
    const char = html[index]!;
    if (char === "<") {
      const match = TAG.exec(html.slice(index));
      if (!match) return failure(`Unclosed start tag at byte offset ${offset(index)}`);
      const [whole, slash, rawName = "", attributes = ""] = match;
      const name = rawName.toLowerCase();
      if (slash === "/") {
        const open = stack.pop();
        if (open === undefined) return failure(`Unexpected end tag at byte offset ${offset(index)}`);
        if (open !== name) {
          return failure(
            `Unmatched end tag at byte offset ${offset(index)}, expected "</${open}>", found "</${name}>"`,
          );
        }
      } else {
        if (!SUPPORTED.has(name))
          return failure(`Unsupported start tag "${name}" at byte offset ${offset(index)}`);
        if (name === "span" && !/class\s*=\s*"tg-spoiler"/.test(attributes)) {
          return failure(`Tag "span" must have class "tg-spoiler" at byte offset ${offset(index)}`);
        }
        if (name === "a" && !/href\s*=\s*"[^"]*"/.test(attributes)) {
          return failure(`Can't find href attribute of tag "a" at byte offset ${offset(index)}`);
        }
        stack.push(name);
      }
      index += whole.length;
    } else if (char === "&") {
      const match = ENTITY.exec(html.slice(index, index + 12));
      const body = match?.[1];
      if (match && body !== undefined) {
        const decoded = body.startsWith("#")
          ? String.fromCodePoint(
              body[1] === "x" || body[1] === "X" ? Number.parseInt(body.slice(2), 16) : Number(body.slice(1)),
            )
          : NAMED[body.toLowerCase()];
        if (decoded === undefined)
          return failure(`Unsupported HTML entity "&${body};" at byte offset ${offset(index)}`);
        text += decoded;
        index += match[0].length;
      } else {
        text += char;
        index += 1;
      }
    } else {
      text += char;
      index += 1;
    }
  }
  const unclosed = stack.pop();
  if (unclosed !== undefined) return failure(`Can't find end tag corresponding to start tag "${unclosed}"`);
  return { ok: true, text };
}
