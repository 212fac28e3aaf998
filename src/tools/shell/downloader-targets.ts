/**
 * The downloaders (DOWNLOADERS), what each writes (downloaderTargets: curl-targets.ts,
 * wget-targets.ts for wget and wget2, other-downloader-targets.ts for aria2c, HTTPie and xh), and
 * what a line may do to their configuration (configuresDownloaders), apart from the line-level
 * reading in downloads.ts. Long options abbreviated as getopt allows are read as the option they
 * abbreviate (downloader-words.ts).
 */
import { curlTargets } from "./curl-targets.js";
import { aria2Targets, httpieTargets } from "./other-downloader-targets.js";
import { wgetTargets } from "./wget-targets.js";

/** HTTPie's programs and xh's, which read the same options. */
const HTTPIE_LIKE: ReadonlySet<string> = new Set(["http", "https", "xh", "xhs"]);

/** The programs whose downloads downloaderTargets reads (and whose output the permission rules follow). */
export const DOWNLOADERS: ReadonlySet<string> = new Set(["curl", "wget", "wget2", "aria2c", ...HTTPIE_LIKE]);

/**
 * A line that may set up a downloader's configuration before running it: it names one of their
 * configuration files (`echo 'output = evil.sh' > ~/.curlrc; curl …`, `~/.config/xh/config.json`),
 * or the home folder they are read from (a `~` bash expands, `/home/…`), where a file's name may
 * be one bash expands (`> ~/.curl$F`; `cd; … > .cur$F`: HOME_BY_CD, on the line's text only), or a variable
 * that moves them (`export CURL_HOME=.`, `read HOME`, `printf -v CURL_HOME`), so the options the
 * downloader reads are not all on the line. xh's folder and file are looked for apart (`D=
 * ~/.config/xh; … > $D/con""fig.json`); as one pattern, `xh.*config` took time quadratic in a line
 * of many `xh`.
 */
const CONFIGURES_DOWNLOADERS = /curlrc|wgetrc|wget2rc|aria2\.conf|httpie|(^|[\s=:;&|(<>'"])(~|\/home\b)/i;
const MOVES_CONFIGURATION = /\b(CURL_HOME|WGETRC|WGET2RC|XDG_CONFIG_HOME|XH_CONFIG_DIR|HOME)\b/;
const HOME_BY_CD = /\bcd\s*($|[;&|)])/m;

/**
 * Whether a command line may set up a downloader's configuration (CONFIGURES_DOWNLOADERS): `text`
 * as written, `words` its words and redirection targets as bash reads them (`~/.cur''lrc`).
 */
export function configuresDownloaders(text: string, words: readonly string[]): boolean {
  const read = [text, ...words].join("\n");
  return (
    CONFIGURES_DOWNLOADERS.test(read) ||
    MOVES_CONFIGURATION.test(read) ||
    HOME_BY_CD.test(text) ||
    (/\bxh\b/i.test(read) && /config/i.test(read))
  );
}

/**
 * A downloader's own targets, as curlTargets, wgetTargets, aria2Targets and httpieTargets read its
 * words (`marked`); none for another program. `assigned`: the variables set on the command
 * (`CURL_HOME=. curl …`); `lineConfigures`: its line may set up a downloader's configuration
 * (configuresDownloaders), so the options it reads may name the saved file: its folder counts.
 */
export function downloaderTargets(
  program: string,
  marked: readonly string[],
  assigned: readonly string[],
  lineConfigures: boolean,
): string[] {
  // A configuration file of the caller's choosing can name the output: curl reads a .curlrc in
  // CURL_HOME, XDG_CONFIG_HOME or HOME, wget WGETRC or a .wgetrc in HOME.
  const configured = (...names: string[]) =>
    lineConfigures || assigned.some((word) => names.includes(word.slice(0, word.indexOf("="))));
  if (program === "curl") return curlTargets(marked, configured("CURL_HOME", "XDG_CONFIG_HOME", "HOME"));
  if (program === "wget") return wgetTargets(marked, configured("WGETRC", "HOME"));
  if (program === "wget2") return wgetTargets(marked, configured("WGET2RC", "XDG_CONFIG_HOME", "HOME"));
  // aria2c records its folder whatever its configuration says.
  if (program === "aria2c") return aria2Targets(marked);
  if (HTTPIE_LIKE.has(program))
    return httpieTargets(marked, configured("XDG_CONFIG_HOME", "HOME", "XH_CONFIG_DIR"));
  return [];
}
