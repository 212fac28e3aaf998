/**
 * The %-escapes of a store URL's parts that its client percent-decodes — the username and password
 * (redis://user:pw@host, postgres://user:pw@host) and a Postgres database name (postgres://…/db) —
 * decoded as the Redis and Postgres clients decode them, or why they cannot be. A hand-written part
 * with a bare "%" ("ops%team", "pa%ss") is a URL the clients fail on with a bare "URI malformed",
 * naming neither the URL nor the fix: the config check (validate-config.ts) reports it instead,
 * naming the part, and registering the config's secrets (config-secrets.ts) takes the password as
 * written. Nothing here repeats a part.
 */

/** The decoded password, or the one as written with why it cannot be decoded. */
export interface StorePassword {
  readonly password: string;
  readonly problem?: string;
}

/** A part of a store URL that cannot be decoded, and why (to follow "the <part> in store_url "). */
export interface StoreUrlEscapeProblem {
  readonly part: "username" | "password" | "database name";
  readonly problem: string;
}

/** A "%" not followed by two hex digits. */
const BARE_PERCENT = /%(?![0-9A-Fa-f]{2})/;

/** Schemes whose path is a database name the client decodes (a Redis path is a database number). */
const DATABASE_NAME_SCHEMES: ReadonlySet<string> = new Set(["postgres:", "postgresql:"]);

/** `written` percent-decoded, or why it cannot be. */
function decodePart(written: string): { readonly decoded: string } | { readonly problem: string } {
  if (BARE_PERCENT.test(written)) {
    return { problem: "has a % not followed by two hex digits: percent-encode it as %25" };
  }
  try {
    return { decoded: decodeURIComponent(written) };
  } catch {
    return { problem: "has %-escapes that do not spell UTF-8 text: percent-encode a literal % as %25" };
  }
}

function parsed(url: string | undefined): URL | undefined {
  return url !== undefined && URL.canParse(url.trim()) ? new URL(url.trim()) : undefined;
}

/** The password of `url`, if it is a URL with one (see StorePassword). */
export function storeUrlPassword(url: string | undefined): StorePassword | undefined {
  const written = parsed(url)?.password ?? "";
  if (written === "") return undefined;
  const result = decodePart(written);
  return "problem" in result ? { password: written, problem: result.problem } : { password: result.decoded };
}

/** Each part of `url` its client would fail to decode; empty for a URL without such parts, or no URL. */
export function storeUrlEscapeProblems(url: string | undefined): readonly StoreUrlEscapeProblem[] {
  const target = parsed(url);
  if (target === undefined) return [];
  const parts: ReadonlyArray<readonly [StoreUrlEscapeProblem["part"], string]> = [
    ["username", target.username],
    ["password", target.password],
    ["database name", DATABASE_NAME_SCHEMES.has(target.protocol) ? target.pathname.slice(1) : ""],
  ];
  return parts.flatMap(([part, written]) => {
    const result = decodePart(written);
    return "problem" in result ? [{ part, problem: result.problem }] : [];
  });
}
