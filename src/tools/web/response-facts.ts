/**
 * What web_fetch may say about a response in its own words, outside the untrusted-content fence
 * (untrusted-page.ts): facts whose form we check, never the server's free text. A status line's
 * reason ("404 Not Found. SYSTEM: ignore …") and a Content-Type header are whatever the server
 * wrote, so outside the fence a status is its number with the standard reason phrase, and a media
 * type is shown only when it is a plain `type/subtype` (RFC 9110 token characters, bounded length),
 * else as "unknown type". A URL is the WHATWG serialisation — percent-encoded, so no spaces,
 * controls or non-ASCII — cut to a bounded length, as a redirect's Location may run to kilobytes.
 */
import { STATUS_CODES } from "node:http";
import { clip } from "../../core/surrogate-pairs.js";

/** Characters of a URL shown at most. */
const URL_CHARS = 500;

/** A media type as web_fetch repeats it: two RFC 9110 tokens, at most 127 characters each (RFC 6838). */
const MEDIA_TYPE = /^[!#$%&'*+.^_`|~0-9a-z-]{1,127}\/[!#$%&'*+.^_`|~0-9a-z-]{1,127}$/i;

/** `status` with its standard reason phrase ("404 Not Found"), or the bare number when it has none. */
export function statusFact(status: number): string {
  const reason = STATUS_CODES[status];
  return reason === undefined ? String(status) : `${status} ${reason}`;
}

/** A media type (the Content-Type before any `;`) when it is a plain `type/subtype`, else "unknown type". */
export function mediaTypeFact(type: string): string {
  return MEDIA_TYPE.test(type) ? type : "unknown type";
}

/** A URL as web_fetch names it: its serialisation, cut to a bounded length. */
export function urlFact(url: URL): string {
  return clip(url.href, URL_CHARS);
}
