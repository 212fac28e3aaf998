/**
 * Download provenance for shell commands: which files a command downloads (curl -o/-O, wget,
 * `curl … > file`, `curl … | tee file`) and which folders it fills from elsewhere (a git clone, an
 * extracted download: folder-downloads.ts, or the folder of a file whose name is not on the line:
 * one the server names, curl -J's and wget --content-disposition's, a URL glob's, wget -i's, or
 * options read from elsewhere, curl -K and CURL_HOME= (or HOME=), wget -e and WGETRC= (or HOME=);
 * written with a trailing `/`), so they can be recorded in the session facts. The permission
 * engine asks a person before anything runs them (or a file under them:
 * engine/permissions/download-execution.ts). A target bash expands (`-o $F`, `-o "$D/x"`,
 * `-o $(…)`, `tee {a,b}`, `-o e?il.sh`, `> ~/x`) is not its text: it counts as the command's
 * folder, the folder written before the expansion (`out/` of `out/$F`, though `$F` may hold `..`)
 * and itself when its name is written (`$D/x`), and the command asks first (lineDownloads says it
 * lands unplaced): a later command in that folder names none of them. A name a URL gives (`curl -O
 * https://x.test/$F`) counts as its folder, as one the server gives. A script a command runs in
 * turn (`bash -c '…'`, `eval …`) downloads as the line does. A curl / wget word bash expands from
 * its start (`curl "$F" …`, `wget "$U"`) may hold options or a URL naming the file, so it counts
 * as such a target too. On a line whose structure sends a download's output on (a substitution, a
 * subshell, a group or loop, `exec`), every command's redirections count; so do those of a
 * command reading a file its line downloads, and what it copies it to (`mv a x`, `dd if=a of=x`).
 * Heuristics over the words bash would see (shell-words.ts, so `$'\x63url' -o x.sh …` is curl
 * too, and a long option abbreviated as getopt allows, `--output-doc=x`, is the option it
 * abbreviates); they lean towards flagging.
 */
import path from "node:path";
import type { SessionFacts } from "../../core/tool.js";
import { realpathOfMaybeMissing } from "../files/workspace-paths.js";
import { folderDownloads } from "./folder-downloads.js";
import { type ParsedCommand, type ParsedScript, parseScript } from "./parsed-script.js";
import type { ShellWord } from "./shell-words.js";

/** The programs whose downloads are recorded (and whose output the permission rules follow). */
const DOWNLOADERS: ReadonlySet<string> = new Set(["curl", "wget"]);

/**
 * Whether a simple command downloads: it runs a downloader, or a script it runs in turn does
 * (`bash -c 'curl …'`, `eval curl …`, to the depth parsed-script.ts reads), so its output is a
 * download's.
 */
export function runsDownloader({ program, inner }: ParsedCommand): boolean {
  return DOWNLOADERS.has(program) || inner?.commands.some(runsDownloader) === true;
}

/**
 * Marks put into a word's text where bash would expand it (shell-words.ts says only that a word
 * expands somewhere, and drops a substitution's text), so a target read from it says which part of
 * it is not on the line: EXPANDS before each `$ ~ { } * ? [ ]` of a word bash expands; HIDDEN at
 * the end of a word bash expands on a line holding a substitution or `$'…'` / `$"…"`, which leave
 * no trace in the text, so anywhere in it; IN_NAME for those in a name read from a URL (curl -O,
 * wget), which stay within it. Characters of Unicode's private use area, which no command here
 * spells.
 */
const EXPANDS = "\uE000";
const IN_NAME = "\uE001";
const HIDDEN = "\uE002";
const MARKED = /[\uE000-\uE002]/;

/** A word's text with the marks (above) where bash would expand it; `hidden`: its line holds a substitution. */
function markedText(word: ShellWord, hidden: boolean): string {
  if (word.literal) return word.text;
  if (hidden) return `${word.text}${HIDDEN}`;
  return word.text.replace(/[$~{}*?[\]]/g, `${EXPANDS}$&`);
}

/** A saved name read from a URL (never holding `/`): its expansions stay within it (IN_NAME). */
function nameFromUrl(name: string): string {
  return name.replace(new RegExp(MARKED, "g"), IN_NAME);
}

/** `dir` and `file` joined as path.join does, but as written when an expansion may hold `..` there. */
function under(dir: string, file: string): string {
  if (dir === "" || !(MARKED.test(dir) || MARKED.test(file))) return path.join(dir, file);
  return `${dir}/${file}`;
}

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
 * The folder a download the command line does not name is written into (one named by the server,
 * curl's -J, wget's --content-disposition; or by curl's URL globbing): the whole folder counts as
 * downloaded (`./` for the command's own, which holds any relative path).
 */
function serverNamedFolder(dir: string): string {
  return MARKED.test(dir) ? `${dir}/` : `${path.posix.join(dir || ".", ".")}/`;
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

/**
 * Whether a downloader's word (marked: markedText) may hold options of its own: bash expands it from
 * its start (`"$F"`, `$(…)`, `{-o,x}`, a glob matching a file `-ox`) or somewhere a substitution
 * left no trace (HIDDEN), so it may be `-oevil.sh`, or a URL whose saved name is not on the line
 * (`wget "$U"`): it counts as a target bash expands (placed), and the command asks.
 */
function mayHoldOptions(word: string): boolean {
  return word.startsWith(EXPANDS) || word.includes(HIDDEN);
}

/** curl's short options, besides -o and -K, whose value is the rest of the word or the next word. */
const CURL_VALUED = new Set("AbcCdDeEFHmPQrtTuUwxXyYz");

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

/** curl's long options read here, to which abbreviations are written out. */
const CURL_LONG = ["output", "output-dir", "remote-name", "remote-name-all", "remote-header-name", "config"];

function curlTargets(args: readonly string[], configured: boolean): string[] {
  const outputs: string[] = [];
  const urls: string[] = [];
  let remoteName = false;
  let headerName = false;
  let outputDir = "";
  // Options read from a file (-K, --config; or a .curlrc in CURL_HOME, HOME…) can name the output.
  let config = configured;
  const expanded: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const arg = fullOption(args[i] as string, CURL_LONG);
    if (arg === "--output" || arg === "--output-dir" || arg === "--config") {
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
    else if (CURL_VALUED_LONG.has(arg)) i += 1;
    else if (/^-[A-Za-z]/.test(arg) && !arg.startsWith("--")) {
      for (let c = 1; c < arg.length; c += 1) {
        if (arg[c] === "O") remoteName = true;
        if (arg[c] === "J") headerName = true;
        if (CURL_VALUED.has(arg[c] as string)) {
          if (c === arg.length - 1) i += 1;
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
  const named = remoteName ? urls.map((url) => nameFromUrl(urlBasename(url) as string)) : [];
  const files = [...outputs, ...named]
    .filter((file) => file !== "" && file !== "-")
    .map((file) => (outputDir && !path.isAbsolute(file) ? under(outputDir, file) : file));
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

function wgetTargets(args: readonly string[], configured: boolean): string[] {
  let document: string | undefined;
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
    } else if (arg.startsWith("--output-document=")) document = arg.slice("--output-document=".length);
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
    } else {
      if (mayHoldOptions(arg)) expanded.push(arg);
      const url = urlRead(arg);
      if (/^(https?|ftps?):\/\/[^/]/.test(url) && URL.canParse(url)) urls.push(url);
    }
  }
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

/** One simple command of a line, as the download heuristics read it. */
interface Step {
  readonly program: string;
  /** Its arguments' texts with the marks where bash would expand them (markedText). */
  readonly marked: readonly string[];
  /** Redirections to and from files (not fd duplications such as `2>&1`), their targets marked. */
  readonly redirects: ReadonlyArray<{ readonly op: string; readonly target: string }>;
  /** Its stdin is the previous command's output (top-level pipelines of a plain line). */
  readonly pipedFromPrevious: boolean;
  /** The variables set on it (`WGETRC=x wget …`, `env CURL_HOME=. curl …`). */
  readonly assigned: readonly string[];
  /** The script it runs in turn (`sh -c '…'`, `eval …`), parsed: its downloads are the line's. */
  readonly inner: ParsedScript | undefined;
  /** It downloads: a downloader, or a script it runs in turn holds one (`bash -c 'curl …' > x`). */
  readonly downloads: boolean;
  /** It sends on the output of commands before it (SENDS_OUTPUT_ON, before its program's arguments). */
  readonly sendsOn: boolean;
}

/** Programs writing a copy of their files to their last argument (a file, or a folder keeping their names). */
const COPIERS: ReadonlySet<string> = new Set(["cp", "mv", "install", "ln"]);

/**
 * Programs that send on the output of commands before them on a plain line: the end of a group or
 * a compound command (`{ curl …; } > x`, `for …; do curl …; done > x`, `fi`, `esac`), and `exec`
 * (`exec > x; curl …`, `exec 3>x; curl -o /dev/fd/3 …`).
 */
const SENDS_OUTPUT_ON = new Set(["}", "done", "fi", "esac", "exec"]);

function stepsOf({ text, line, commands }: ParsedScript): Step[] {
  // A substitution or `$'…'` / `$"…"` leaves no trace in its word's text (HIDDEN).
  const hidden = /\$[('"]|`/.test(text);
  return commands.map((parsed, i) => {
    const { command: simple, texts, program, args, inner } = parsed;
    return {
      program,
      inner,
      downloads: runsDownloader(parsed),
      sendsOn: texts.slice(0, texts.length - args.length).some((text) => SENDS_OUTPUT_ON.has(text)),
      marked: simple.words.slice(texts.length - args.length).map((word) => markedText(word, hidden)),
      assigned: texts.slice(0, texts.length - args.length - 1).filter((word) => /^[A-Za-z_]\w*=/.test(word)),
      redirects: simple.redirects
        .filter(({ op, target }) => !(op.endsWith("&") && /^(\d+|-)$/.test(target.text)))
        .map(({ op, target }) => ({ op, target: markedText(target, hidden) })),
      pipedFromPrevious: line.plain && i > 0 && line.joiners[i - 1] === "|",
    };
  });
}

/**
 * Whether where a download's output goes cannot be followed command by command: the line holds a
 * substitution, a subshell or a process substitution (`echo "$(curl …)" > x`, `(curl …) > x`,
 * `curl -o >(cat > x) …`), or a program that sends on earlier commands' output (SENDS_OUTPUT_ON).
 * Then every command of it counts as fed by a download, its redirections and tee's files recorded.
 */
function outputUntraced({ line }: ParsedScript, steps: readonly Step[]): boolean {
  return !line.plain || steps.some((step) => step.sendsOn);
}

/**
 * What a target read with marks (markedText) counts as: itself (a folder normalised) when bash
 * expands none of it; its folder when only the name a URL gives it does (as for a name the server
 * gives); else the command's folder, the folder written before the first expansion and the target
 * itself when its name is written, and `unplaced`: which file it writes, or where, is not on the
 * line.
 */
function placed(target: string): { readonly files: string[]; readonly unplaced: boolean } {
  const at = target.search(MARKED);
  // A folder as written (folder-downloads.ts's) is normalised only here, where nothing expands.
  if (at === -1)
    return { files: [target.endsWith("/") ? serverNamedFolder(target) : target], unplaced: false };
  const unmarked = (text: string) => text.replace(new RegExp(MARKED, "g"), "");
  const folder = target.slice(0, target.lastIndexOf("/", at) + 1);
  if (!/[\uE000\uE002/]/.test(target.slice(at)) && folder !== "/")
    return { files: [serverNamedFolder(unmarked(folder))], unplaced: false };
  const files = [serverNamedFolder("")];
  if (target.includes(HIDDEN)) return { files, unplaced: true };
  if (folder.length > 1) files.push(serverNamedFolder(unmarked(folder)));
  if (!MARKED.test(target.slice(target.lastIndexOf("/") + 1))) files.push(unmarked(target));
  return { files, unplaced: true };
}

/** A downloader's own targets, as curlTargets and wgetTargets read its words; none for another program. */
function downloaderTargets({ program, marked, assigned }: Step): string[] {
  // A configuration file of the caller's choosing can name the output: curl reads a .curlrc in
  // CURL_HOME, XDG_CONFIG_HOME or HOME, wget WGETRC or a .wgetrc in HOME.
  const configured = (...names: string[]) =>
    assigned.some((word) => names.includes(word.slice(0, word.indexOf("="))));
  if (program === "curl") return curlTargets(marked, configured("CURL_HOME", "XDG_CONFIG_HOME", "HOME"));
  if (program === "wget") return wgetTargets(marked, configured("WGETRC", "HOME"));
  return [];
}

/**
 * Where a step writes on a download: its redirections when it downloads or is fed one (by its
 * pipeline or a line whose output is untraced, `fedByLine`; or it reads a file the line downloads,
 * `fromLine`: `cat a > x`), then tee's files and dd's of= when fed, and a copier's last argument
 * when it copies such a file (`cp a x`): a later command in the record's sight names the
 * download, this line may not.
 */
function writtenOn(step: Step, fedByLine: boolean, fromLine: (file: string) => boolean): string[] {
  const { program, marked } = step;
  const sources =
    program === "dd"
      ? marked.filter((arg) => arg.startsWith("if=")).map((arg) => arg.slice("if=".length))
      : marked.filter((arg) => !arg.startsWith("-"));
  const fed = fedByLine || sources.some(fromLine);
  let written =
    step.downloads || fed ? step.redirects.filter((r) => r.op.includes(">")).map((r) => r.target) : [];
  if (fed && program === "tee") written = written.concat(sources);
  if (fed && program === "dd")
    written = written.concat(
      marked.filter((arg) => arg.startsWith("of=")).map((arg) => arg.slice("of=".length)),
    );
  if (COPIERS.has(program) && sources.slice(0, -1).some(fromLine))
    written = written.concat(sources.slice(-1));
  return written;
}

/** What a command line downloads (see lineDownloads). */
interface LineDownloads {
  /** Files (and folders, ending in `/`) it would download, as written (detectDownloads). */
  readonly targets: string[];
  /** One of them lands where the line does not say (placed): a path a shell expansion names. */
  readonly unplaced: boolean;
}

/**
 * What a command line downloads: its targets (detectDownloads) and whether one lands at a path a
 * shell expansion names (`-o $F`, `-o "$D/x.sh"`, `tee {a,b}`, `> ~/x`), so which file it writes,
 * or where, is not on the line and cannot be recorded (the targets count the folders it may land
 * in, which a later command need not name). One reading for a check that needs both.
 */
export function lineDownloads(
  command: string | ParsedScript,
  downloaded: Iterable<string> = [],
): LineDownloads {
  const targets: string[] = [];
  let unplaced = false;
  // The targets' names, and the recorded files' (read when an extraction first asks): an archive
  // is a download when it has one of them, looked up, not searched for each extraction.
  const names = new Set<string>();
  let recorded: ReadonlySet<string> | undefined;
  // One by one: a spread of a command's (unbounded) argument list can pass the engine's argument limit.
  const add = (found: readonly string[]) => {
    for (const target of found) {
      // What is written to /dev/null is gone (`curl -o /dev/null -w '%{http_code}' …`): recorded, it
      // would make every later `2>/dev/null` ask.
      if (target === "/dev/null") continue;
      const counted = placed(target);
      unplaced ||= counted.unplaced;
      for (const file of counted.files) {
        targets.push(file);
        names.add(path.posix.basename(file));
      }
    }
  };
  const fromLine = (file: string) => names.has(path.posix.basename(file));
  const isDownload = (archive: string) => {
    recorded ??= new Set(Array.from(downloaded, (file) => path.posix.basename(file)));
    return fromLine(archive) || recorded.has(path.posix.basename(archive));
  };
  // A script a command runs in turn (`bash -c 'curl -o x.sh …'`, `eval …`) downloads as the line
  // does (read to the depth parsed-script.ts reads it).
  const read = (script: ParsedScript) => {
    const steps = stepsOf(script);
    const tangled = steps.some((step) => step.downloads) && outputUntraced(script, steps);
    let pipelineHasDownloader = false;
    for (const step of steps) {
      pipelineHasDownloader = (step.pipedFromPrevious && pipelineHasDownloader) || tangled;
      add(downloaderTargets(step));
      add(writtenOn(step, pipelineHasDownloader, fromLine));
      // Marked, so a clone or an extraction into a folder bash expands (`-C $D`) is counted as one.
      add(
        folderDownloads(step.program, step.marked, (archive) =>
          archive === "-" ? pipelineHasDownloader : isDownload(archive),
        ),
      );
      pipelineHasDownloader ||= step.downloads;
      if (step.inner !== undefined) read(step.inner);
    }
  };
  read(parseScript(command));
  return { targets: [...new Set(targets)], unplaced };
}

/**
 * Files (and folders, ending in `/`) a command line would download, as written (relative to the
 * command's directory). `downloaded`: the files recorded before, whose extraction is a download too
 * (matched by name, as the permission rule matches them). `command` as written or parsed
 * (parsed-script.ts).
 */
export function detectDownloads(command: string | ParsedScript, downloaded: Iterable<string> = []): string[] {
  return lineDownloads(command, downloaded).targets;
}

/**
 * Record the files (and folders, ending in `/`) a finished command downloaded, as real absolute
 * paths, in the session facts.
 */
export async function recordDownloads(command: string, cwd: string, facts: SessionFacts): Promise<string[]> {
  const files = await Promise.all(
    detectDownloads(command, facts.downloadedFiles).map(async (file) => {
      const real = await realpathOfMaybeMissing(path.resolve(cwd, file));
      return file.endsWith("/") && !real.endsWith("/") ? `${real}/` : real;
    }),
  );
  for (const file of files) facts.downloadedFiles.add(file);
  return files;
}
