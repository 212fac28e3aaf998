/**
 * Fetch-then-execute: a shell command that runs code the agent downloaded always waits for a
 * person, whatever the mode, the grants or the reviewer say. A prompt-injected model that gets
 * curl to fetch a script and a shell to run it owns the sandbox, so this rule is checked on the
 * words bash would see after quote removal (`./inst''all.sh` is `./install.sh`, `c\url` is
 * `curl`, `sh -c` scripts are read in turn) and not only on the raw text. A command asks when:
 * - it names a file the agent downloaded into the workspace before — in any session on it, the
 *   thread's earlier ones (before "new") or another conversation's (sessions/workspace-
 *   downloads.ts) — as a word, or inside one (such as
 *   `python3 -c "exec(open('get.py').read())"`)), or a path under a folder it downloaded (a git
 *   clone, an extracted download: tools/shell/folder-downloads.ts), `bash repo/install.sh`; a
 *   folder extracted into the command's own directory (`./`) holds any relative path;
 * - it may use one without spelling its name (unspelled-files.ts): a glob that matches it
 *   (`bash inst?ll.sh`, `./bin/too[l]`), an expansion where a program or an interpreter's argument
 *   goes (`bash $(ls)`, `$RUN`), a runner that reads it (`make` after a downloaded Makefile);
 * - it pipes a download (curl, wget, aria2c, HTTPie, xh, a program named by an expansion; or a
 *   script run in turn that downloads, `bash -c 'curl …'`) into an interpreter (or into a program
 *   named by an expansion, `| $SHELL`), or runs a download in a substitution next to one (`bash
 *   <(curl …)`, `sh -c "$(curl …)"`);
 * - it downloads a file and runs it in the same line (`curl -o x.sh … && sh x.sh`, or `sh ./*.sh`),
 *   or a folder (a clone, an extraction) and runs anything that may run what it holds (`git clone
 *   … r && cd r && make`: runsFromFolder);
 * - it downloads to a path a shell expansion names (`curl -o $F …`, `wget -P "$D" …`,
 *   `curl … | tee {a,b}`, `curl … > ~/x`): the record cannot say which file it writes or where
 *   (tools/shell/downloads.ts), so a later command could run it unmatched;
 * - the record is full (it holds DOWNLOAD_RECORD_FULL: sessions/downloaded-files.ts stops it
 *   growing at a cap, and marks it so): files downloaded since are not named in it, and any
 *   command may run one (by a name, a glob, a program on PATH, a hook or a config a tool reads),
 *   so every command asks, until an operator clears the record (README.md, "downloaded code").
 * - it would record more than MAX_DOWNLOADS_UNASKED downloads (`curl … -o f1 … -o f10000`), or
 *   take the record past its cap (MAX_DOWNLOADED_FILES, with what it holds and what the step's
 *   earlier calls would download): the cap is shared by the workspace, so unasked commands filling
 *   it would make every command in every conversation on it ask until an operator clears it; a
 *   person decides.
 * A heuristic that leans towards asking; the sandbox is the wall behind it.
 */
import { posix } from "node:path";
import { trimTrailing } from "../../core/trim-trailing.js";
import { lineDownloads, runsDownloader } from "../../tools/shell/downloads.js";
import {
  type ParsedCommand,
  type ParsedScript,
  parseScript,
  programNamedByExpansion,
} from "../../tools/shell/parsed-script.js";
import { programOf } from "../../tools/shell/shell-program.js";
import { lexedCommandWords } from "./hard-deny-commands.js";
import { INTERPRETERS, runsUngivenFiles, unspelledUses } from "./unspelled-files.js";

/**
 * The entry a record of downloaded files holds once it is full (sessions/downloaded-files.ts): not a
 * path any file can have (a NUL byte ends a path in every system call, and no shell word holds
 * one), so no download is taken for it; an entry, not a flag beside the set, so every copy of the
 * set (a step's, with what its calls would download: step-downloads.ts) carries it, and the store
 * keeps it as it keeps the files, for every process and after a restart.
 */
export const DOWNLOAD_RECORD_FULL = "\u0000the record of downloaded files is full";

/**
 * The most files a workspace's record of downloads holds (sessions/downloaded-files.ts stops it
 * there and marks it full). Far past honest use: a git clone, an extracted archive or a recursive
 * wget is one entry (its folder), so this is years of a team's downloads; at it, the set costs a
 * few MB in each process, this rule about 10 ms a check (measured on 2 cores), the store a few MB.
 * Here, beside the rule, because the rule asks before a command would take the record past it.
 */
export const MAX_DOWNLOADED_FILES = 10_000;

/**
 * The most downloads (what lineDownloads foresees, each an entry of the record) one command
 * records without a person. Far past honest use (a clone or an extraction is one entry), and a
 * tenth of the record's cap, so no single command fills it unasked.
 */
const MAX_DOWNLOADS_UNASKED = 1_000;

/** A path without `.` and `..` segments, doubled or trailing slashes (`.` itself is ""). */
function normalisePath(path: string): string {
  const normal = trimTrailing(posix.normalize(path), "/");
  return normal === "." ? "" : normal;
}

/**
 * Files as namesAny reads them, gathered once for every word of a check (a command of many simple
 * commands against many downloads is read in time linear in each, not their product).
 */
interface NamedFiles {
  /** Each one's name, the last segment of its path ("" for the command's directory). */
  readonly names: ReadonlySet<string>;
  /** The names of those that are folders (ending in `/`), but the command's directory. */
  readonly folders: ReadonlySet<string>;
  /** Whether the command's directory (`./`) is one of the folders: it holds every relative path. */
  readonly here: boolean;
}

function namedFiles(files: ReadonlySet<string>): NamedFiles {
  const names = new Set<string>();
  const folders = new Set<string>();
  let here = false;
  for (const file of files) {
    const path = normalisePath(file);
    const name = path.slice(path.lastIndexOf("/") + 1);
    names.add(name);
    if (!file.endsWith("/")) continue;
    if (path === "") here = true;
    else folders.add(name);
  }
  return { names, folders, here };
}

/**
 * Whether one of `words` is one of `files`, by path or by file name (its last segment is a file's
 * name), or a path under one of them that is a folder (`repo/x.sh`, `a/repo/x.sh`: one of its
 * other segments is the folder's name; `./`, the command's directory, holds every relative path).
 */
function namesAny(words: readonly string[], files: NamedFiles): boolean {
  return words.some((word) => {
    const path = normalisePath(word);
    const segments = path.split("/");
    const last = segments.pop() as string;
    if (files.names.has(last) || segments.some((segment) => files.folders.has(segment))) return true;
    return files.here && path !== "" && !path.startsWith("/") && !path.startsWith("-");
  });
}

/** The raw text cut at shell punctuation: finds names inside a word (an inline script's path). */
function rawTokens(command: string): string[] {
  return command.split(/[\s;&|<>()`'"=]+/).filter(Boolean);
}

/** Whether a simple command (its words, redirections at the end) runs one of `files`. */
function runsAny(words: readonly string[], files: NamedFiles): boolean {
  const { program, invoked, args } = programOf(words);
  if (invoked.includes("/") && namesAny([invoked], files)) return true;
  return INTERPRETERS.has(program) && namesAny(args, files);
}

/**
 * Tools whose script, read from a file (`awk -f x.awk`, `sed -f x.sed`, `vim -S x.vim`), may run
 * commands (`system()`, GNU sed's `e`, `:!`). Not interpreters otherwise: `curl … | awk '{print $1}'`
 * runs the program written on the line.
 */
const SCRIPT_FILE_TOOLS: ReadonlySet<string> = new Set([
  "awk",
  "gawk",
  "mawk",
  "nawk",
  "sed",
  "vim",
  "nvim",
  "ex",
]);

/**
 * Whether a simple command may run what a folder its line downloaded holds (`git clone … r && cd r
 * && make`, `tar xz && make -C a`, `cd a && python3 setup.py install`): an interpreter, a program
 * run by its path or named by an expansion, or a runner reading files it is not given, as its
 * program or as a word of it (a wrapper programOf does not read: `flock /tmp/l make`, `watch
 * make`, `script -c make`). Which folder it runs in is not followed (`cd`, `-C`, `--prefix`): any
 * of them does, on such a line.
 */
function runsFromFolder(parsed: ParsedCommand): boolean {
  const { program, invoked, args } = parsed;
  return (
    INTERPRETERS.has(program) ||
    // -f or -S alone or in a cluster of short options (`sed -nf x.sed`, `gawk -bf x.awk`).
    (SCRIPT_FILE_TOOLS.has(program) && args.some((arg) => /^(-[A-Za-z]*[fS]|--file)/.test(arg))) ||
    invoked.includes("/") ||
    runsUngivenFiles(program, args) ||
    programNamedByExpansion(parsed) ||
    args.some((arg) => INTERPRETERS.has(arg) || runsUngivenFiles(arg, []))
  );
}

/** What the pipe rule needs of one simple command, read once. */
function stageOf(parsed: ParsedCommand) {
  const { command, program, invoked, inner } = parsed;
  return {
    inner,
    // A script run in turn that downloads (`bash -c 'curl …' | sh`) feeds its output on too.
    downloads: runsDownloader(parsed),
    // A program named by an expansion (`$SHELL`, `"$RUN"`) could be any interpreter.
    interprets: INTERPRETERS.has(program) || command.words.some((w) => w.text === invoked && !w.literal),
  };
}

/** Whether a line pipes a download into an interpreter (reading `sh -c` scripts in turn). */
function pipesDownloadIntoInterpreter({ line, commands }: ParsedScript): boolean {
  const stages = commands.map(stageOf);
  if (!line.plain)
    // Substitutions and subshells: a download anywhere beside an interpreter anywhere.
    return stages.some((s) => s.downloads) && stages.some((s) => s.interprets);
  let fedByDownload = false;
  for (const [i, stage] of stages.entries()) {
    fedByDownload = i > 0 && line.joiners[i - 1] === "|" && fedByDownload;
    if (fedByDownload && stage.interprets) return true;
    fedByDownload ||= stage.downloads;
    if (stage.inner !== undefined && pipesDownloadIntoInterpreter(stage.inner)) return true;
  }
  return false;
}

/**
 * Why running `command` executes something downloaded (see the module comment), or undefined.
 * `downloaded`: the files the agent downloaded into the workspace, by any session on it, as
 * recorded (a full record: every command asks). The command is parsed once (parsed-script.ts)
 * and that parse handed to every rule.
 */
export function downloadExecution(command: string, downloaded: ReadonlySet<string>): string | undefined {
  // Before any parse: a full record costs no work per file, whatever it holds.
  if (downloaded.has(DOWNLOAD_RECORD_FULL))
    return "the workspace's record of downloaded files is full (an operator clears it), so any command may run a file the agent downloaded";
  const parsed = parseScript(command);
  const commands = lexedCommandWords(parsed);
  const recorded = namedFiles(downloaded);
  if (downloaded.size > 0 && (namesAny(rawTokens(command), recorded) || namesAny(commands.flat(), recorded)))
    return "this command uses a file the agent downloaded into the workspace";
  if (downloaded.size > 0 && unspelledUses(parsed, downloaded).length > 0)
    return "this command may use a file the agent downloaded into the workspace without spelling its name (a pattern, an expansion or a program that reads it)";
  if (pipesDownloadIntoInterpreter(parsed))
    return "this command feeds a download straight into an interpreter";
  const { targets, unplaced } = lineDownloads(parsed, downloaded);
  if (unplaced)
    return "this command downloads to a path a shell expansion names (a variable, a substitution, `~`, a brace list or a glob), so which file it writes cannot be recorded";
  const fetched = new Set(targets);
  const named = namedFiles(fetched);
  if (
    fetched.size > 0 &&
    (commands.some((words) => runsAny(words, named)) ||
      unspelledUses(parsed, fetched, true).length > 0 ||
      (targets.some((target) => target.endsWith("/")) && parsed.commands.some(runsFromFolder)))
  )
    return "this command downloads a file and runs it";
  if (fetched.size > MAX_DOWNLOADS_UNASKED)
    return `this command would record ${fetched.size} downloads, more than the ${MAX_DOWNLOADS_UNASKED} one command records unasked: the workspace's record of downloaded files is capped, and once it is full every shell command asks until an operator clears it`;
  const recordedAfter = downloaded.size + [...fetched].filter((file) => !downloaded.has(file)).length;
  if (recordedAfter > MAX_DOWNLOADED_FILES)
    return `this command would take the workspace's record of downloaded files past its cap of ${MAX_DOWNLOADED_FILES} (it holds ${downloaded.size}): once it is full every shell command asks until an operator clears it`;
  return undefined;
}
