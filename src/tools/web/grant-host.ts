/**
 * What a web approval names of a URL: its host — lower case, no trailing dot — with `:port` when
 * the URL names a port other than its scheme's default (80 for http, 443 for https). Another port
 * is another service on the same machine (example.com:6379 is not the site at example.com), so
 * an approval for https://example.com must not reach it, whether the model asks for it or a
 * redirect leads there. A domain grant and web_fetch's redirect check compare hosts by this one
 * key; a grant naming a bare host (all grants before ports counted) covers the default ports only.
 */

/** The host a web grant names for `url`: "example.com" on its scheme's default port, else "example.com:8080". */
export function grantHost(url: URL): string {
  const host = url.hostname.toLowerCase().replace(/\.$/, "");
  // The URL parser leaves `port` empty for the scheme's default port, however it was written.
  return url.port === "" ? host : `${host}:${url.port}`;
}
