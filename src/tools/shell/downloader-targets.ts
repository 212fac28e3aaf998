/**
 * What curl and wget write, read from their words (marked where bash expands them:
 * download-marks.ts): -o / -O / --output-dir, -J and URL globs (the folder, as the server or the
 * glob names the file), -K and a caller's configuration (the folder), and the other files curl fills
 * with what the server sent (-D headers, -c cookies, --trace …, -w's %output{file}); wget's -O /
 * -P / -i / -e / --content-disposition, recursive fetches, its log (-o / -a) and WARC files, wget2
 * as wget; aria2c's folder and log; HTTPie's and xh's --download and --output. Long options
 * abbreviated as getopt allows are read as the option they abbreviate. One module for the
 * downloaders (DOWNLOADERS) and their option grammars, with what a line may do to their
 * configuration (configuresDownloaders), apart from the line-level reading in downloads.ts.
 */
import path from "node:path";
import { HIDDEN, MARKED, mayHoldOptions, nameFromUrl, serverNamedFolder, under } from "./download-marks.js";

/** The decoded last path segment of an http(s) / ftp(s) URL, or undefined for anything else. */
function urlBasename(word: string): string | undefined {
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
function urlRead(arg: string): string {
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
function fullOption(arg: string, names: readonly string[]): string {
  if (!arg.startsWith("--")) return arg;
  const eq = arg.indexOf("=");
  const name = arg.slice(2, eq === -1 ? undefined : eq);
  if (names.includes(name)) return arg;
  const matches = names.filter((known) => known.startsWith(name));
  return matches.length === 1 ? `--${matches[0]}${eq === -1 ? "" : arg.slice(eq)}` : arg;
}

/** curl's short options, besides -o and -K, whose value is the rest of the word or the next word. */
const CURL_VALUED = new Set("AbcCdDeEFHmPQrtTuUwxXyYz");

/**
 * curl's short options, besides -o, that name a file curl writes with what the server sent: -D the
 * response headers (a server's header lines, which bash runs one by one), -c the cookie jar.
 */
const CURL_WRITING_SHORT = new Set("Dc");

/**
 * curl's long options, besides --output, that name a file curl writes with what the server sent
 * (headers, cookies, the whole exchange, its own messages about it). `-` (and `%` for --stderr)
 * is standard output, no file.
 */
const CURL_WRITING_LONG = new Set([
  "--dump-header",
  "--cookie-jar",
  "--trace",
  "--trace-ascii",
  "--stderr",
  "--libcurl",
  "--etag-save",
  "--hsts",
  "--alt-svc",
]);

/** curl's long options whose value is the next word (never an option, whatever it holds). */
const CURL_VALUED_LONG = new Set([
  "--header",
  "--data",
  "--data-raw",
  "--data-binary",
  "--data-urlencode",
  "--json",
  "--user",
  "--user-agent",
  "--request",
  "--cookie",
  "--form",
  "--write-out",
  "--max-time",
  "--connect-timeout",
  "--retry",
  "--proxy",
  "--referer",
  "--range",
]);

/**
 * curl's long options read here, to which abbreviations are written out (the valued ones too, so
 * `--cookie` stays itself rather than abbreviating `--cookie-jar`).
 */
const CURL_LONG = [
  "output",
  "output-dir",
  "remote-name",
  "remote-name-all",
  "remote-header-name",
  "config",
  ...[...CURL_WRITING_LONG, ...CURL_VALUED_LONG].map((option) => option.slice(2)),
];

/**
 * curl's options naming what it writes (or where the URL's name comes from, with -O), which, as
 * `--expand-output '{{name}}'` (curl 8.3), take a name from a --variable: from a file or the
 * environment, not the line.
 */
const CURL_EXPANDABLE = new Set([
  "--output",
  "--output-dir",
  "--config",
  "--write-out",
  "--url",
  ...CURL_WRITING_LONG,
]);

/** Whether a writing option's value names a file: `-` is standard output, `%` standard error. */
function namesFile(value: string): boolean {
  return value !== "" && value !== "-" && value !== "%";
}

function curlTargets(args: readonly string[], configured: boolean): string[] {
  const outputs: string[] = [];
  // Files written beside the download (headers, cookies, traces): --output-dir does not apply.
  const written: string[] = [];
  const urls: string[] = [];
  let remoteName = false;
  let headerName = false;
  let outputDir = "";
  // Options read from a file (-K, --config; or a .curlrc in CURL_HOME, HOME…) can name the output.
  let config = configured;
  const expanded: string[] = [];
  // -w / --write-out formats: `%output{file}` writes what follows (`%header{…}`: the server's) to a file.
  const writeOuts: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const arg = fullOption(args[i] as string, CURL_LONG);
    const expands = /^--expand-([^=]+)(=?)/.exec(arg);
    if (expands !== null) {
      // Which file it writes is not on the line: it lands unplaced (HIDDEN), and the command asks.
      if (CURL_EXPANDABLE.has(fullOption(`--${expands[1]}`, CURL_LONG))) expanded.push(HIDDEN);
      if (expands[2] === "") i += 1;
    } else if (arg === "--output" || arg === "--output-dir" || arg === "--config") {
      const value = args[i + 1] ?? "";
      if (arg === "--output") outputs.push(value);
      else if (arg === "--output-dir") outputDir = value;
      else config = true;
      i += 1;
    } else if (arg.startsWith("--output=")) outputs.push(arg.slice("--output=".length));
    else if (arg.startsWith("--output-dir=")) outputDir = arg.slice("--output-dir=".length);
    else if (arg.startsWith("--config=")) config = true;
    else if (arg === "--remote-name" || arg === "--remote-name-all") remoteName = true;
    else if (arg === "--remote-header-name") headerName = true;
    else if (CURL_WRITING_LONG.has(arg)) {
      written.push(args[i + 1] ?? "");
      i += 1;
    } else if (arg.includes("=") && CURL_WRITING_LONG.has(arg.slice(0, arg.indexOf("="))))
      written.push(arg.slice(arg.indexOf("=") + 1));
    else if (arg === "--write-out" || arg.startsWith("--write-out=")) {
      writeOuts.push(arg === "--write-out" ? (args[i + 1] ?? "") : arg.slice("--write-out=".length));
      if (arg === "--write-out") i += 1;
    } else if (CURL_VALUED_LONG.has(arg)) i += 1;
    else if (/^-[A-Za-z]/.test(arg) && !arg.startsWith("--")) {
      for (let c = 1; c < arg.length; c += 1) {
        if (arg[c] === "O") remoteName = true;
        if (arg[c] === "J") headerName = true;
        if (CURL_VALUED.has(arg[c] as string)) {
          const rest = arg.slice(c + 1);
          if (CURL_WRITING_SHORT.has(arg[c] as string)) written.push(rest || (args[i + 1] ?? ""));
          if (arg[c] === "w") writeOuts.push(rest || (args[i + 1] ?? ""));
          if (!rest) i += 1;
          break;
        }
        if (arg[c] === "o" || arg[c] === "K") {
          const rest = arg.slice(c + 1);
          if (arg[c] === "o") outputs.push(rest || (args[i + 1] ?? ""));
          else config = true;
          if (!rest) i += 1;
          break;
        }
      }
    } else {
      if (mayHoldOptions(arg)) expanded.push(arg);
      const url = urlRead(arg);
      if (urlBasename(url)) urls.push(url);
    }
  }
  for (const format of writeOuts) {
    // A format read from a file (`-w @fmt`, `@-`) may name any: the folder counts.
    if (format.startsWith("@")) config = true;
    // One bash expands (`-w "%output{$F}…"`) writes where the line does not say: HIDDEN, it asks.
    const expands = MARKED.test(format);
    const plain = format.replace(new RegExp(MARKED, "g"), "");
    // Split, not matched: a pattern scanning to each `}` took time quadratic in `%output{%output{…`.
    for (const part of plain.split("%output{").slice(1)) {
      const end = part.indexOf("}");
      written.push(expands ? HIDDEN : part.slice(0, end === -1 ? undefined : end).replace(/^>>/, ""));
    }
  }
  const named = remoteName ? urls.map((url) => nameFromUrl(urlBasename(url) as string)) : [];
  const files = [...outputs, ...named]
    .filter((file) => file !== "" && file !== "-")
    .map((file) => (outputDir && !path.isAbsolute(file) ? under(outputDir, file) : file))
    .concat(written.filter(namesFile));
  // Names the line does not spell: the server's (-J names an -O download by its Content-Disposition
  // header), or those curl's URL globbing (`{a,b}`, `[1-3]`) fills in, in an -O name or an -o's
  // `#1`: the folders they land in count.
  const globbed = urls.some((url) => /[{[]/.test(url));
  const folders = files
    .filter((file) => globbed && /[{[]|#\d/.test(file))
    .map((file) => serverNamedFolder(path.posix.dirname(file)));
  if ((remoteName && headerName && urls.length > 0) || config) folders.push(serverNamedFolder(outputDir));
  return [...files, ...folders, ...expanded];
}

/** wget's short options that take a value: what follows one in a cluster is its value (`-qPdir`). */
const WGET_VALUED = new Set("aABDeiIlnoOPQRtTUwX");

/** wget's long options read here, to which abbreviations are written out. */
const WGET_LONG = [
  "output-document",
  "output-file",
  "append-output",
  "directory-prefix",
  "input-file",
  "execute",
  "content-disposition",
  "trust-server-names",
  "recursive",
  "mirror",
  "force-directories",
  "no-host-directories",
  "no-directories",
  "warc-file",
];

/**
 * wgetrc commands (as `execute` spells them) that change neither where a file is saved nor its
 * name; any other may (input, output_document, recursive, dirstruct, cut_dirs, default_page, …).
 */
const WGETRC_NAMELESS = new Set([
  "robots",
  "tries",
  "timeout",
  "wait",
  "verbose",
  "quiet",
  "useragent",
  "header",
  "checkcertificate",
  "limitrate",
  "progress",
]);

/**
 * The folder of a WARC archive wget writes besides its downloads (--warc-file NAME: NAME.warc.gz,
 * NAME.warc with --no-warc-compression, NAME-00001.warc.gz when split, NAME.cdx), which holds
 * what the servers sent as they sent it: its files are named after NAME, not as NAME.
 */
function warcFolder(name: string): string {
  return serverNamedFolder(name.includes("/") ? name.slice(0, name.lastIndexOf("/")) : "");
}

function wgetTargets(args: readonly string[], configured: boolean): string[] {
  let document: string | undefined;
  // The log (-o, -a): with -S or -d it holds the server's header lines; and a WARC's folder.
  const logs: string[] = [];
  let prefix = "";
  const urls: string[] = [];
  // The URLs are read from a file (-i, --input-file), or the options (WGETRC=, a -e command) can
  // name what is saved: the names are not on the line.
  let input = configured;
  const expanded: string[] = [];
  // A wgetrc command (-e, --execute; wget ignores case, `-` and `_` in its name): dir_prefix is -P;
  // output_document is -O, its value as wgetrc reads it (`~` expanded) perhaps another, so its
  // folder counts too; any other but those known to leave the saved names alone (input, recursive,
  // dirstruct, default_page, …) leaves the names off the line.
  const execute = (command: string) => {
    const at = command.indexOf("=");
    if (at === -1) return;
    const name = command
      .slice(0, at)
      .replace(/[-_\s]/g, "")
      .toLowerCase();
    const value = command.slice(at + 1).trim();
    if (name === "dirprefix") prefix = value;
    if (name === "outputdocument") document = value;
    input ||= name !== "dirprefix" && !WGETRC_NAMELESS.has(name);
  };
  const options = args.map((arg) => fullOption(arg, WGET_LONG));
  for (let i = 0; i < args.length; i += 1) {
    const arg = options[i] as string;
    if (arg === "--output-document" || arg === "--directory-prefix" || arg === "--execute") {
      const value = args[i + 1] ?? "";
      if (arg === "--output-document") document = value;
      else if (arg === "--directory-prefix") prefix = value;
      else execute(value);
      i += 1;
    } else if (arg === "--output-file" || arg === "--append-output") {
      logs.push(args[i + 1] ?? "");
      i += 1;
    } else if (arg === "--warc-file") {
      logs.push(warcFolder(args[i + 1] ?? ""));
      i += 1;
    } else if (arg.startsWith("--warc-file=")) logs.push(warcFolder(arg.slice("--warc-file=".length)));
    else if (/^--(output-file|append-output)=/.test(arg)) logs.push(arg.slice(arg.indexOf("=") + 1));
    else if (arg.startsWith("--output-document=")) document = arg.slice("--output-document=".length);
    else if (arg.startsWith("--directory-prefix=")) prefix = arg.slice("--directory-prefix=".length);
    else if (arg.startsWith("--execute=")) execute(arg.slice("--execute=".length));
    else if (/^--input-file(=|$)/.test(arg)) input = true;
    else if (/^-[A-Za-z]/.test(arg)) {
      // The cluster's first option taking a value takes the rest of it (`-qiurls.txt`) or the next word.
      let at = 1;
      while (at < arg.length && !WGET_VALUED.has(arg[at] as string)) at += 1;
      if (at === arg.length) continue;
      const rest = arg.slice(at + 1);
      const value = rest || (args[i + 1] ?? "");
      if (!rest) i += 1;
      if (arg[at] === "O") document = value;
      else if (arg[at] === "P") prefix = value;
      else if (arg[at] === "i") input = true;
      else if (arg[at] === "e") execute(value);
      else if (arg[at] === "o" || arg[at] === "a") logs.push(value);
    } else {
      if (mayHoldOptions(arg)) expanded.push(arg);
      const url = urlRead(arg);
      if (/^(https?|ftps?):\/\/[^/]/.test(url) && URL.canParse(url)) urls.push(url);
    }
  }
  return [...wgetSaved({ input, document, prefix, urls, expanded, options }), ...logs.filter(namesFile)];
}

/** What wget read from its words: whether names come from elsewhere, -O, -P, the URLs, the rest. */
interface WgetReading {
  readonly input: boolean;
  readonly document: string | undefined;
  readonly prefix: string;
  readonly urls: readonly string[];
  readonly expanded: readonly string[];
  readonly options: readonly string[];
}

/** The files (or folders) wget saves what it downloads to, as its words say. */
function wgetSaved({ input, document, prefix, urls, expanded, options }: WgetReading): readonly string[] {
  if (input) {
    const named = document === undefined || document === "-" ? [] : [document];
    return [...named, serverNamedFolder(prefix), ...expanded];
  }
  if (document !== undefined) return document === "-" ? expanded : [document, ...expanded];
  // The server names the file (a Content-Disposition header, a redirect's last URL).
  const serverNamed = options.some((arg) => /^--(content-disposition|trust-server-names)(=on)?$/.test(arg));
  // A recursive fetch, or one saving under the URL's folders (-x), fills the host's folder, or the
  // prefix itself without host folders.
  const recursive = options.some((arg) =>
    /^(--recursive|--mirror|--force-directories|-[A-Za-z]*[rmx][A-Za-z]*)$/.test(arg),
  );
  if (recursive) {
    const flat = options.some((arg) => /^(-nH|-nd|--no-host-directories|--no-directories)$/.test(arg));
    return [
      ...urls.map((url) => serverNamedFolder(under(prefix, flat ? "." : new URL(url).host))),
      ...expanded,
    ];
  }
  const files = urls.map((url) => under(prefix, nameFromUrl(urlBasename(url) ?? "index.html")));
  return [...files, ...(serverNamed && urls.length > 0 ? [serverNamedFolder(prefix)] : []), ...expanded];
}

/** The value of a short (`-dX`, `-d X`) or long (`--dir=X`, `--dir X`) option at `i`, and the words it took. */
function optionValue(
  args: readonly string[],
  i: number,
  short: string,
  long: string,
): [string, number] | undefined {
  const arg = args[i] as string;
  if (arg === short || arg === long) return [args[i + 1] ?? "", 2];
  if (arg.startsWith(`${long}=`)) return [arg.slice(long.length + 1), 1];
  if (arg.startsWith(short) && !arg.startsWith("--")) return [arg.slice(short.length), 1];
  return undefined;
}

/**
 * aria2c saves under its folder (-d, --dir; the working folder by default) by names the URL, the
 * server, an -o, an input file (-i) or a torrent or metalink may give: the folder counts, and its
 * log (-l, --log) holds what the servers sent.
 */
function aria2Targets(args: readonly string[]): string[] {
  let dir = "";
  const written: string[] = [];
  const expanded: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const folder = optionValue(args, i, "-d", "--dir");
    const log = folder ? undefined : optionValue(args, i, "-l", "--log");
    const taken = folder ?? log;
    if (taken) {
      if (folder) dir = taken[0];
      else written.push(taken[0]);
      i += taken[1] - 1;
    } else if (mayHoldOptions(args[i] as string)) expanded.push(args[i] as string);
  }
  return [serverNamedFolder(dir), ...written.filter(namesFile), ...expanded];
}

/**
 * HTTPie's long options beginning as --download and --output do, to which abbreviations are written
 * out (its argument parser takes `--down`, `--outp=x`).
 */
const HTTPIE_LONG = ["download", "default-scheme", "debug", "output", "offline"];

/**
 * HTTPie (`http`, `https`) and xh download with -d / --download: into -o / --output's file, else
 * into the working folder under a name the URL or the server gives (the folder counts); -o alone
 * writes the body to its file too. Short flags cluster (`-do x.sh`, `-dox.sh`). `configured`: its
 * default options may be the caller's (the folder counts).
 */
function httpieTargets(args: readonly string[], configured: boolean): string[] {
  let download = false;
  const outputs: string[] = [];
  const expanded: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const arg = fullOption(args[i] as string, HTTPIE_LONG);
    if (arg === "--download") download = true;
    else if (arg === "--output") outputs.push(args[++i] ?? "");
    else if (arg.startsWith("--output=")) outputs.push(arg.slice("--output=".length));
    else if (/^-[A-Za-z]/.test(arg) && !arg.startsWith("--")) {
      for (let c = 1; c < arg.length; c += 1) {
        if (arg[c] === "d") download = true;
        if (arg[c] === "o") {
          outputs.push(arg.slice(c + 1) || (args[++i] ?? ""));
          break;
        }
      }
    } else if (mayHoldOptions(arg)) expanded.push(arg);
  }
  const files = outputs.filter(namesFile);
  // Its configuration (default options) may turn on --download too.
  const serverNamed = (download && files.length === 0) || configured;
  return [...files, ...(serverNamed ? [serverNamedFolder("")] : []), ...expanded];
}

/** The programs whose downloads downloaderTargets reads (and whose output the permission rules follow). */
export const DOWNLOADERS: ReadonlySet<string> = new Set([
  "curl",
  "wget",
  "wget2",
  "aria2c",
  "http",
  "https",
  "xh",
  "xhs",
]);

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
  if (DOWNLOADERS.has(program))
    return httpieTargets(marked, configured("XDG_CONFIG_HOME", "HOME", "XH_CONFIG_DIR"));
  return [];
}
