/**
 * Download provenance for shell commands: which files a command downloads (curl -o/-O, wget,
 * `curl … > file`, `curl … | tee file`) and which folders it fills from elsewhere (a git clone, an
 * extracted download: folder-downloads.ts, or the folder of a file whose name is not on the line:
 * one the server names, curl -J's and wget --content-disposition's, a URL glob's, wget -i's, or
 * options read from elsewhere, curl -K and CURL_HOME= (or HOME=), wget -e and WGETRC= (or HOME=);
 * written with a trailing `/`; what the command added to such a folder is recorded too, by name:
 * folder-listings.ts), so they can be recorded in the session facts. The permission
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
 * too); the downloaders' own options (curl, wget, wget2, aria2c, HTTPie, xh) are read in
 * downloader-targets.ts, the marks where bash expands a word in download-marks.ts. A program bash
 * names by an expansion (`$C -o x.sh …`) counts as a downloader whose targets are not on the line.
 * They lean towards flagging.
 */
import path from "node:path";
import type { SessionFacts } from "../../core/tool.js";
import { realpathOfMaybeMissing } from "../files/workspace-paths.js";
import { folderDownloads } from "./folder-downloads.js";
import { addedSince, type FolderListing, listFolders } from "./folder-listings.js";
import {
  type ParsedCommand,
  type ParsedScript,
  parseScript,
  programNamedByExpansion,
} from "./parsed-script.js";
import { HIDDEN, MARKED, markedText, serverNamedFolder } from "./download-marks.js";
import { configuresDownloaders, DOWNLOADERS, downloaderTargets } from "./downloader-targets.js";

/**
 * Whether a simple command downloads: it runs a downloader, or a script it runs in turn does (`bash
 * -c 'curl …'`, `eval curl …`, to the depth parsed-script.ts reads), so its output is a download's;
 * or bash names its program by an expansion (`C=curl; $C -o x.sh URL`, `$(echo curl) …`): it may
 * be any downloader. Whatever the line's text says: the name can be built (`C=cu; ${C}rl`, `C+=…`)
 * and the URL need not be on the line (`evil.test/x.sh`, read from a file); the environment is
 * clean, so such a variable is set on the line itself.
 */
export function runsDownloader(parsed: ParsedCommand): boolean {
  const { program, inner } = parsed;
  if (DOWNLOADERS.has(program)) return true;
  if (inner?.commands.some((command) => runsDownloader(command))) return true;
  return programNamedByExpansion(parsed);
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
  /** Bash names its program by an expansion (runsDownloader): any downloader. */
  readonly unknownDownloader: boolean;
  /** It sends on the output of commands before it (SENDS_OUTPUT_ON, before its program's arguments). */
  readonly sendsOn: boolean;
}

/** Programs writing a copy of their files to their last argument (a file, or a folder keeping their names). */
const COPIERS: ReadonlySet<string> = new Set(["cp", "mv", "install", "ln", "rsync", "scp"]);

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
      // A downloader bash names by an expansion: which, and so what it writes, is not on the line.
      unknownDownloader: programNamedByExpansion(parsed),
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

/** What a line's reading knows of its downloads and the record's, by name (lineDownloads). */
interface Downloaded {
  /** The line downloads a file of that name. */
  readonly fromLine: (file: string) => boolean;
  /** The line downloads, or the record holds, a file of that name. */
  readonly isDownload: (file: string) => boolean;
  /** The line downloads, or the record holds, a folder of that name. */
  readonly isFolderDownload: (folder: string) => boolean;
}

/** The files a step reads: its arguments (dd's if=) and its input redirections (`cat < a`). */
function sourcesOf({ program, marked, redirects }: Step): string[] {
  const args =
    program === "dd"
      ? marked.filter((arg) => arg.startsWith("if=")).map((arg) => arg.slice("if=".length))
      : marked.filter((arg) => !arg.startsWith("-"));
  return args.concat(redirects.filter((r) => /^\d*<>?$/.test(r.op)).map((r) => r.target));
}

/**
 * Whether a step passes a download on to its output: it reads a file the line downloads (`cat a >
 * x`), or cat / dd copy one downloaded before (`cat < a | tee x`).
 */
function passesOnDownload(step: Step, { fromLine, isDownload }: Downloaded): boolean {
  const sources = sourcesOf(step);
  return (
    sources.some(fromLine) || ((step.program === "cat" || step.program === "dd") && sources.some(isDownload))
  );
}

/**
 * Where a step writes on a download: its redirections when it downloads or is fed one (by its
 * pipeline or a line whose output is untraced, `fedByLine`; or it passes one on itself:
 * passesOnDownload), then tee's files and dd's of= when fed, and a copier's last argument when it
 * copies a file the line or the record holds (`cp a x`): a later command in the record's sight
 * names the download, this line may not.
 */
function writtenOn(step: Step, fedByLine: boolean, downloaded: Downloaded): string[] {
  const { program, marked } = step;
  const { isDownload, isFolderDownload } = downloaded;
  const fed = fedByLine || passesOnDownload(step, downloaded);
  let written =
    step.downloads || fed ? step.redirects.filter((r) => r.op.includes(">")).map((r) => r.target) : [];
  const args = marked.filter((arg) => !arg.startsWith("-"));
  if (fed && program === "tee") written = written.concat(args);
  if (fed && program === "dd")
    written = written.concat(
      marked.filter((arg) => arg.startsWith("of=")).map((arg) => arg.slice("of=".length)),
    );
  const copied = COPIERS.has(program) ? args.slice(0, -1).filter(isDownload) : [];
  // A copy of a downloaded folder is one (`cp -r repo copy`: later `copy/install.sh` is under it).
  if (copied.length > 0)
    written = written.concat(args.slice(-1).map((to) => (copied.some(isFolderDownload) ? `${to}/` : to)));
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
  // The targets' names, and the recorded files' (read when an extraction or a copy first asks): an
  // archive or a copy's source is a download when it has one of them, looked up, not searched for
  // each.
  const names = new Set<string>();
  let recorded: ReadonlySet<string> | undefined;
  // Those of them that are folders (a clone, an extraction): a copy of one is a folder too.
  const folderNames = new Set<string>();
  let recordedFolders: ReadonlySet<string> | undefined;
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
        if (file.endsWith("/")) folderNames.add(path.posix.basename(file));
      }
    }
  };
  const fromLine = (file: string) => names.has(path.posix.basename(file));
  const isDownload = (archive: string) => {
    recorded ??= new Set(Array.from(downloaded, (file) => path.posix.basename(file)));
    return fromLine(archive) || recorded.has(path.posix.basename(archive));
  };
  const isFolderDownload = (folder: string) => {
    recordedFolders ??= new Set(
      Array.from(downloaded)
        .filter((file) => file.endsWith("/"))
        .map((file) => path.posix.basename(file)),
    );
    const name = path.posix.basename(folder);
    return folderNames.has(name) || recordedFolders.has(name);
  };
  const reading: Downloaded = { fromLine, isDownload, isFolderDownload };
  // A script a command runs in turn (`bash -c 'curl -o x.sh …'`, `eval …`) downloads as the line
  // does (read to the depth parsed-script.ts reads it).
  const read = (script: ParsedScript) => {
    const steps = stepsOf(script);
    const tangled = steps.some((step) => step.downloads) && outputUntraced(script, steps);
    let pipelineHasDownloader = false;
    for (const step of steps) {
      pipelineHasDownloader = (step.pipedFromPrevious && pipelineHasDownloader) || tangled;
      if (DOWNLOADERS.has(step.program)) {
        configures ??= mayConfigureDownloaders(whole);
        add(downloaderTargets(step.program, step.marked, step.assigned, configures));
      }
      // Its targets cannot be read: a target bash expands (HIDDEN), so the command asks.
      if (step.unknownDownloader) add([HIDDEN]);
      add(writtenOn(step, pipelineHasDownloader, reading));
      // Marked, so a clone or an extraction into a folder bash expands (`-C $D`) is counted as one.
      add(
        folderDownloads(step.program, step.marked, (archive) =>
          archive === "-" ? pipelineHasDownloader : isDownload(archive),
        ),
      );
      // What it passes on feeds the rest of its pipeline (`cat a | tee x`, `dd if=a | dd of=x`).
      pipelineHasDownloader ||= step.downloads || passesOnDownload(step, reading);
      if (step.inner !== undefined) read(step.inner);
    }
  };
  const whole = parseScript(command);
  // Whether the line may set up a downloader's configuration (the whole line, scripts run in turn
  // included): read once, and only on a line that runs a downloader.
  let configures: boolean | undefined;
  read(whole);
  return { targets: [...new Set(targets)], unplaced };
}

/**
 * Whether a line may set up a downloader's configuration (configuresDownloaders): in its text, or
 * in its words and redirection targets as bash reads them (`~/.cur''lrc`), those of a script it runs
 * in turn included, read together (`D=~/.config/xh; … > $D/con""fig.json`).
 */
function mayConfigureDownloaders(script: ParsedScript): boolean {
  const words: string[] = [];
  const gather = ({ line, commands }: ParsedScript) => {
    for (const command of line.commands) {
      for (const word of command.words) words.push(word.text);
      for (const redirect of command.redirects) words.push(redirect.target.text);
    }
    for (const command of commands) if (command.inner !== undefined) gather(command.inner);
  };
  gather(script);
  return configuresDownloaders(script.text, words);
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

/** `targets` (files, and folders ending in `/`, as written) as real absolute paths from `cwd`. */
function realTargets(targets: readonly string[], cwd: string): Promise<string[]> {
  return Promise.all(
    targets.map(async (file) => {
      const real = await realpathOfMaybeMissing(path.resolve(cwd, file));
      return file.endsWith("/") && !real.endsWith("/") ? `${real}/` : real;
    }),
  );
}

/**
 * The folders `command` downloads into, listed before it runs (folder-listings.ts), so that
 * recordDownloads can record what it added to them by name.
 */
export async function listDownloadFolders(
  command: string,
  cwd: string,
  facts: SessionFacts,
): Promise<FolderListing[]> {
  const folders = detectDownloads(command, facts.downloadedFiles).filter((target) => target.endsWith("/"));
  return folders.length === 0 ? [] : listFolders(await realTargets(folders, cwd));
}

/**
 * Record the files (and folders, ending in `/`) a finished command downloaded, as real absolute
 * paths, in the session facts; with `before` (listDownloadFolders), also the entries it added to
 * or changed in those folders.
 */
export async function recordDownloads(
  command: string,
  cwd: string,
  facts: SessionFacts,
  before: readonly FolderListing[] = [],
): Promise<string[]> {
  const files = [
    ...(await realTargets(detectDownloads(command, facts.downloadedFiles), cwd)),
    ...(await addedSince(before)),
  ];
  for (const file of files) facts.downloadedFiles.add(file);
  return files;
}
