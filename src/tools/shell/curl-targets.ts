/**
 * What curl writes, read from its words (marked where bash expands them: download-marks.ts): -o /
 * -O / --output-dir, -J and URL globs (the folder, as the server or the glob names the file), -K
 * and a caller's configuration (the folder), the other files it fills with what the server sent
 * (-D headers, -c cookies, --trace …, -w's %output{file}), and curl 8.3's --expand-<option>s.
 */
import path from "node:path";
import { HIDDEN, MARKED, mayHoldOptions, nameFromUrl, serverNamedFolder, under } from "./download-marks.js";
import { fullOption, namesFile, urlBasename, urlRead } from "./downloader-words.js";

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

/**
 * The files (and folders, ending in `/`) curl writes, read from its words (`marked`); `configured`:
 * a configuration file of the caller's choosing may name the output (its folder counts).
 */
export function curlTargets(args: readonly string[], configured: boolean): string[] {
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
