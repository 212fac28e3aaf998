/**
 * Which of some files (the agent's downloads, the files it wrote) a shell command may use without
 * spelling their names, so the checks that look for a name spelled out (download-execution.ts,
 * the reviewer's facts) are not passed by writing it another way:
 * - a glob word (`bash inst?ll.sh`, `./bin/too[l]`, `cat *.sh | sh`) names the files its last
 *   segment matches (shell-glob.ts), wherever it stands — as a spelled name counts anywhere;
 * - an expansion bash fills in at run time (`$VAR`, `${…}`, `$(…)`, backticks) where a program
 *   or an interpreter's argument goes (`$RUN`, `bash $(ls)`, `python3 -c "$CODE"`) may name any;
 * - a runner reads files it is not given (`npm test` runs package.json's scripts, `make` a
 *   Makefile, `pytest` conftest.py and test_*.py, `python -m x` x.py): those files by name.
 * `sh -c` and `eval` scripts are read in turn. A heuristic that leans towards naming.
 */
import { basename } from "node:path";
import { trimTrailing } from "../../core/trim-trailing.js";
import { innerScript, MAX_SCRIPT_NESTING, programOf } from "../../tools/shell/shell-program.js";
import { lexCommandLine, type ShellWord } from "../../tools/shell/shell-words.js";
import { type Glob, globMatches, globSegment, MAX_NAME_CHARS } from "./shell-glob.js";

/** Programs that run the file (or the stdin) they are given. */
export const INTERPRETERS: ReadonlySet<string> = new Set([
  "sh",
  "bash",
  "zsh",
  "dash",
  "ksh",
  "ash",
  "fish",
  "source",
  ".",
  "eval",
  "python",
  "python2",
  "python3",
  "node",
  "deno",
  "bun",
  "perl",
  "ruby",
  "php",
  "pwsh",
  "lua",
  "Rscript",
  "tclsh",
  "osascript",
]);

const PYTHONS = new Set(["python", "python2", "python3"]);

const PACKAGE_SCRIPTS = ["package.json"];
const MAKEFILES = ["Makefile", "makefile", "GNUmakefile", "*.mk"];
const PYTEST_INPUTS = [
  "conftest.py",
  "test_*.py",
  "*_test.py",
  "pytest.ini",
  "pyproject.toml",
  "setup.cfg",
  "tox.ini",
];

/** The files (by name, as globs) a runner reads and runs without being given them. */
const RUNNER_INPUTS: ReadonlyMap<string, readonly string[]> = new Map([
  ["npm", PACKAGE_SCRIPTS],
  ["npx", PACKAGE_SCRIPTS],
  ["yarn", PACKAGE_SCRIPTS],
  ["pnpm", PACKAGE_SCRIPTS],
  ["make", MAKEFILES],
  ["gmake", MAKEFILES],
  ["pytest", PYTEST_INPUTS],
  ["py.test", PYTEST_INPUTS],
  ["tox", ["tox.ini", "pyproject.toml", "setup.cfg", "setup.py"]],
]);

/**
 * More work than this (the globs' tokens, times the files, times a name's longest) is not
 * done: such a command — only a hostile one has that many long globs — names every file.
 */
const MAX_MATCH_WORK = 20_000_000;

/** What a command may name without spelling it: every file, or those a glob matches. */
interface Unspelled {
  /** Only words where they run: a program, an interpreter's arguments and stdin (see unspelledUses). */
  readonly runs: boolean;
  every: boolean;
  readonly globs: Glob[];
  /** The globs' tokens, all told (a glob's work per name is at most its tokens times the name's length). */
  globTokens: number;
}

/** Whether a word has glob characters (seen only in a word bash expands: `literal` false). */
function globbed(word: ShellWord): boolean {
  return !word.literal && /[*?[{]/.test(word.text);
}

/** The runner inputs of a simple command: its program's, or those of the module `python -m` runs. */
function runnerInputs(program: string, args: readonly string[]): readonly string[] {
  const flag = PYTHONS.has(program) ? args.indexOf("-m") : -1;
  const module = flag === -1 ? undefined : args[flag + 1];
  if (module === undefined) return RUNNER_INPUTS.get(program) ?? [];
  const last = module.slice(module.lastIndexOf(".") + 1);
  return [...(RUNNER_INPUTS.get(module) ?? []), `${last}.py`, "__main__.py", "__init__.py"];
}

function addGlob(into: Unspelled, text: string): void {
  const glob = globSegment(text);
  into.globs.push(glob);
  into.globTokens += glob.length;
}

/** Read one script (a command line, or a `sh -c` / `eval` script in it) into `into`. */
function read(script: string, into: Unspelled, depth: number): void {
  // The lexer keeps no text of a substitution in its word: any word of such a script may hold one.
  const substitutes = script.includes("$(") || script.includes("`");
  for (const command of lexCommandLine(script).commands) {
    const words = command.words;
    const texts = words.map((word) => word.text);
    const { program, invoked, args } = programOf(texts);
    const at = texts.length - args.length - 1;
    const programWord =
      texts[at] === invoked && (invoked !== "" || words[at]?.literal === false) ? words[at] : undefined;
    const inner = innerScript(program, args);
    const readsInner = inner !== undefined && depth < MAX_SCRIPT_NESTING;
    // Where a filled-in expansion chooses what runs: the program, and an interpreter's arguments
    // and stdin — but not the script of `sh -c`/`eval`, read in turn (its `$VAR`s are in its text).
    const running: ShellWord[] = programWord === undefined ? [] : [programWord];
    if (INTERPRETERS.has(program)) {
      const argWords = words.slice(at + 1);
      const scripted = (word: ShellWord) =>
        readsInner && !substitutes && (program === "eval" || word.text === inner);
      running.push(...argWords.filter((word) => !scripted(word)));
      running.push(...command.redirects.filter((r) => r.op.startsWith("<")).map((r) => r.target));
    }
    if (running.some((word) => !word.literal && (substitutes || word.text.includes("$")))) into.every = true;
    for (const word of into.runs ? running : [...words, ...command.redirects.map((r) => r.target)])
      if (globbed(word)) addGlob(into, word.text);
    for (const input of runnerInputs(program, args)) addGlob(into, input);
    if (readsInner) read(inner, into, depth + 1);
  }
}

/**
 * The files of `files` that `command` may use without spelling their names (see the module
 * comment), in their order; each is matched by its name (the last segment of its path). `runs`:
 * only those it may run, its globs read only where a program or an interpreter's input goes (for
 * files not there yet when the command is checked, which it creates itself).
 */
export function unspelledUses(command: string, files: Iterable<string>, runs = false): string[] {
  const candidates = [...files];
  if (candidates.length === 0) return [];
  const found: Unspelled = { runs, every: false, globs: [], globTokens: 0 };
  read(command, found, 0);
  if (found.every || found.globTokens * candidates.length * MAX_NAME_CHARS > MAX_MATCH_WORK)
    return candidates;
  if (found.globs.length === 0) return [];
  return candidates.filter((file) => {
    const name = basename(trimTrailing(file, "/"));
    return found.globs.some((glob) => globMatches(glob, name));
  });
}
