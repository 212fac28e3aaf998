/**
 * The password in a store URL (redis://:pw@host, postgres://user:pw@host), percent-decoded as the
 * Redis and Postgres clients decode it — or why it cannot be. A hand-written password with a bare
 * "%" ("pa%ss") is a URL the clients fail on with a bare "URI malformed", naming neither the URL nor
 * the fix: the config check (validate-config.ts) reports it instead, and registering the config's
 * secrets (config-secrets.ts) takes the password as written. Nothing here repeats the password.
 */

/** The decoded password, or the one as written with why it cannot be decoded. */
export interface StorePassword {
  readonly password: string;
  readonly problem?: string;
}

/** A "%" not followed by two hex digits. */
const BARE_PERCENT = /%(?![0-9A-Fa-f]{2})/;

/** The password of `url`, if it is a URL with one (see StorePassword). */
export function storeUrlPassword(url: string | undefined): StorePassword | undefined {
  if (url === undefined || !URL.canParse(url.trim())) return undefined;
  const written = new URL(url.trim()).password;
  if (written === "") return undefined;
  if (BARE_PERCENT.test(written)) {
    return {
      password: written,
      problem: "has a % not followed by two hex digits: percent-encode it as %25",
    };
  }
  try {
    return { password: decodeURIComponent(written) };
  } catch {
    return {
      password: written,
      problem: "has %-escapes that do not spell UTF-8 text: percent-encode a literal % as %25",
    };
  }
}
