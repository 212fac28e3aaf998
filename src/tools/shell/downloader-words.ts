/**
 * How curl, wget, aria2c and HTTPie read the words they share: a URL's saved name, a URL without a
 * scheme or with globbing in its host, a long option abbreviated as getopt allows, and a value
 * that names standard output rather than a file. Apart from each program's own grammar
 * (curl-targets.ts, wget-targets.ts, other-downloader-targets.ts).
 */
/** The decoded last path segment of an http(s) / ftp(s) URL, or undefined for anything else. */
export function urlBasename(word: string): string | undefined {
  try {
    const url = new URL(word);
    if (!/^(https?|ftps?):$/.test(url.protocol)) return undefined;
    const last = url.pathname.split("/").pop() ?? "";
    return decodeURIComponent(last) || undefined;
  } catch {
    return undefined;
  }
}

/**
 * A URL argument as curl and wget read it, for URL(): one without a scheme is http
 * (`x.test/a.sh`), and curl's globbing in a host (`https://cdn[1-3].x/a.sh`, `{a,b}.x`), which
 * URL() refuses (`[`), has its brackets and braces read as letters, as has an expansion there
 * (`https://$H/a.sh`); the path, where the saved name comes from, as written.
 */
export function urlRead(arg: string): string {
  const url = arg.includes("://") || arg.startsWith("-") ? arg : `http://${arg}`;
  if (URL.canParse(url)) return url;
  const parts = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^/?#]*)(.*)$/s.exec(url);
  if (parts === null) return url;
  const [, scheme = "", authority = "", rest = ""] = parts;
  return `${scheme}${authority.replace(/[[\]{}$\uE000-\uE002]/g, "x")}${rest}`;
}

/**
 * A long option as getopt reads it: a word abbreviating exactly one of `names` (`--output-d=x`) is
 * written out in full (`--output-dir=x`); any other word stays as it is.
 */
export function fullOption(arg: string, names: readonly string[]): string {
  if (!arg.startsWith("--")) return arg;
  const eq = arg.indexOf("=");
  const name = arg.slice(2, eq === -1 ? undefined : eq);
  if (names.includes(name)) return arg;
  const matches = names.filter((known) => known.startsWith(name));
  return matches.length === 1 ? `--${matches[0]}${eq === -1 ? "" : arg.slice(eq)}` : arg;
}

/** Whether a writing option's value names a file: `-` is standard output, `%` standard error. */
export function namesFile(value: string): boolean {
  return value !== "" && value !== "-" && value !== "%";
}
