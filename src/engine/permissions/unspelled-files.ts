/**
 * Which of some files (the agent's downloads, the files it wrote) a shell command may use without
 * spelling their names, so the checks that look for a name spelled out (download-execution.ts,
 * the reviewer's facts) are not passed by writing it another way:
 * - a glob word (`bash inst?ll.sh`, `./bin/too[l]`, `cat *.sh | sh`) names the files its last
 *   segment matches (shell-glob.ts), wherever it stands — as a spelled name counts anywhere;
 *   `find -name 'inst*'` and the like too, quoted (find matches them); an extglob (`@(a|b)`,
 *   `!(x)`) may name any;
 * - an expansion bash fills in at run time (`$VAR`, `${…}`, `$(…)`, backticks) where a program
 *   or an interpreter's argument goes (`$RUN`, `bash $(ls)`, `python3 -c "$CODE"`) may name any;
 *   so may one anywhere in a line that runs a file (an interpreter, a program by path or
 *   expansion, a runner): `cat ${X}all.sh | sh` and `cp $X y && bash y` run the file it names
 *   (not `echo $HOME` there, whose output reaches nothing that runs); and one anywhere in a
 *   command that writes a file (`cp $X y`, `echo $X > y`), which a later command may run by its
 *   new name;
 * - a program that runs the names it finds or reads (`xargs bash`, `find -exec sh {} \;`,
 *   `parallel`, `find` in a line that runs a file) may run any;
 * - a runner reads files it is not given (`npm test` runs package.json's scripts, `make` a
 *   Makefile, `pytest` conftest.py and test_*.py, `cargo` build.rs, `pip install .` setup.py,
 *   `python -m x` x.py, and the build tools: `gradle`, `mvn`, `bundle`, `go`, `cmake`, `ninja`,
 *   `pre-commit`, `composer`…): those files by name.
 * `sh -c` and `eval` scripts are read in turn. A heuristic that leans towards naming.
 */
import { basename } from "node:path";
import { trimTrailing } from "../../core/trim-trailing.js";
import { type ParsedScript, parseScript } from "../../tools/shell/parsed-script.js";
import { programOf } from "../../tools/shell/shell-program.js";
import type { ShellRedirect, ShellWord } from "../../tools/shell/shell-words.js";
import { FIND_GLOB_TESTS, FIND_REGEX_TESTS } from "./readonly-find.js";
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

const PIP_INPUTS = ["setup.py", "pyproject.toml"];
const GRADLE_INPUTS = [
  "build.gradle",
  "build.gradle.kts",
  "settings.gradle",
  "settings.gradle.kts",
  "gradlew",
];
const BAZEL_INPUTS = ["BUILD", "BUILD.bazel", "WORKSPACE", "WORKSPACE.bazel", "MODULE.bazel", "*.bzl"];

/** The files (by name, as globs, matched in either case) a runner reads and runs without being given them. */
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
  ["just", ["justfile", ".justfile"]],
  ["rake", ["Rakefile", "Rakefile.rb", "*.rake"]],
  ["cargo", ["build.rs", "Cargo.toml"]],
  ["task", ["Taskfile.yml", "Taskfile.yaml", "Taskfile.dist.yml", "Taskfile.dist.yaml"]],
  ["go-task", ["Taskfile.yml", "Taskfile.yaml", "Taskfile.dist.yml", "Taskfile.dist.yaml"]],
  ["nox", ["noxfile.py"]],
  ["grunt", ["Gruntfile.*"]],
  ["gulp", ["gulpfile.*"]],
  ["direnv", [".envrc", ".env"]],
  // Build tools and package managers that run the build scripts, hooks and code of their folder.
  ["gradle", GRADLE_INPUTS],
  ["gradlew", GRADLE_INPUTS],
  ["mvn", ["pom.xml", ".mvn"]],
  ["mvnw", ["pom.xml", ".mvn"]],
  ["ant", ["build.xml"]],
  ["sbt", ["build.sbt", "*.scala"]],
  ["bundle", ["Gemfile", "*.gemspec", "Rakefile"]],
  ["gem", ["*.gemspec", "Gemfile"]],
  ["ninja", ["build.ninja"]],
  ["cmake", ["CMakeLists.txt", "*.cmake"]],
  ["meson", ["meson.build", "meson_options.txt"]],
  ["bazel", BAZEL_INPUTS],
  ["bazelisk", BAZEL_INPUTS],
  ["go", ["*.go", "go.mod"]],
  ["poetry", ["pyproject.toml"]],
  ["uv", ["pyproject.toml", "setup.py", "*.py"]],
  ["pdm", ["pyproject.toml"]],
  ["hatch", ["pyproject.toml"]],
  ["pre-commit", [".pre-commit-config.yaml"]],
  ["composer", ["composer.json"]],
  ["mix", ["mix.exs"]],
  ["dotnet", ["*.csproj", "*.fsproj", "*.sln", "Directory.Build.*"]],
  ["swift", ["Package.swift"]],
  ["deno", ["deno.json", "deno.jsonc"]],
  ["bun", PACKAGE_SCRIPTS],
]);

/**
 * Programs whose expansions, when their output is neither piped nor redirected, reach nothing that
 * runs: they only show something, change no file, set no variable (not `printf -v`, not `export`).
 */
const SHOWS = new Set([
  "echo",
  "cd",
  "pwd",
  "ls",
  "cat",
  "head",
  "tail",
  "wc",
  "grep",
  "test",
  "[",
  "stat",
  "file",
  "du",
  "which",
  "type",
  "date",
  "sleep",
  "true",
  "false",
]);

/** Programs that write the files they are given, or their contents, under another name. */
const COPIERS = new Set([
  "cp",
  "mv",
  "ln",
  "link",
  "install",
  "rsync",
  "dd",
  "tee",
  "tar",
  "cpio",
  "zip",
  "unzip",
]);

/** Whether a redirection writes a file (not `2>&1`, `>&-`, nor into /dev/null). */
function writesFile(redirect: ShellRedirect): boolean {
  const target = redirect.target.text;
  if (!redirect.op.includes(">") || target === "/dev/null") return false;
  return !(redirect.op.endsWith("&") && /^(\d+|-)$/.test(target));
}

/** pip and pip3 build (so run) a local project they install: `pip install .`, `-e ./x`. */
const PIPS = new Set(["pip", "pip3"]);

/** find's actions that run a command on what it finds. */
const FIND_EXECS = new Set(["-exec", "-execdir", "-ok", "-okdir"]);

/**
 * An extglob (`@(a|b)`, `+(`, `!(`, `*(`, `?(`: ksh's and zsh's, bash's with extglob on) may match
 * any name; no glob of ours reads it. Looked for in the raw text, quoted or not: the lexer splits
 * the word at its `(`, and quoting inside substitutions is not worth following for a lean.
 */
const EXTGLOB = /[@+!*?]\(/;

/**
 * More work than this (the globs' work, a bracket list's test counted by its length, times the
 * files, times a name's longest) is not done: such a command — only a hostile one has that many
 * long globs or bracket lists — names every file.
 */
const MAX_MATCH_WORK = 20_000_000;

/** What a command may name without spelling it: every file, or those a glob matches. */
interface Unspelled {
  /** Only words where they run: a program, an interpreter's arguments and stdin (see unspelledUses). */
  readonly runs: boolean;
  every: boolean;
  readonly globs: Glob[];
  /** The globs' work, all told (a glob's work per name is at most Glob.work times the name's length). */
  globWork: number;
}

/** Whether a word has glob characters (seen only in a word bash expands: `literal` false). */
function globbed(word: ShellWord): boolean {
  return !word.literal && /[*?[{]/.test(word.text);
}

/** The files a runner named `name` reads, given its arguments `args`. */
function inputsOf(name: string, args: readonly string[]): readonly string[] {
  if (!PIPS.has(name)) return RUNNER_INPUTS.get(name) ?? [];
  const local = args.some((arg) => arg === "-e" || arg.startsWith("--editable") || /^[./~]|\//.test(arg));
  return args.includes("install") && local ? PIP_INPUTS : [];
}

/** The runner inputs of a simple command: its program's, or those of the module `python -m` runs. */
function runnerInputs(program: string, args: readonly string[]): readonly string[] {
  const flag = PYTHONS.has(program) ? args.indexOf("-m") : -1;
  const module = flag === -1 ? undefined : args[flag + 1];
  if (module === undefined) return inputsOf(program, args);
  const last = module.slice(module.lastIndexOf(".") + 1);
  return [...inputsOf(module, args.slice(flag + 2)), `${last}.py`, "__main__.py", "__init__.py"];
}

/**
 * Whether a simple command runs files it is not given: a runner reading its inputs (`make`, `npm
 * test`, `pip install .`, `python -m x`; RUNNER_INPUTS) from the folder it runs in.
 */
export function runsUngivenFiles(program: string, args: readonly string[]): boolean {
  return runnerInputs(program, args).length > 0;
}

function addGlob(into: Unspelled, text: string): void {
  const glob = globSegment(text);
  into.globs.push(glob);
  into.globWork += glob.work;
}

/** find's glob arguments, quoted or not (find matches them itself); a regex may match any name. */
function addFindGlobs(texts: readonly string[], into: Unspelled): void {
  if (!texts.some((text) => basename(text) === "find")) return;
  for (const [i, text] of texts.entries()) {
    const pattern = texts[i + 1];
    if (pattern === undefined) continue;
    if (FIND_GLOB_TESTS.has(text)) addGlob(into, pattern);
    else if (FIND_REGEX_TESTS.has(text)) into.every = true;
  }
}

/** The string xargs replaces with each name it reads (`-I %`, `-I%`, `-i`, `--replace`), if any. */
function replaced(texts: readonly string[]): string | undefined {
  for (const [i, text] of texts.entries()) {
    if (text === "-I") return texts[i + 1];
    if (text.startsWith("-I")) return text.slice(2);
    if (text.startsWith("--replace=")) return text.slice("--replace=".length);
    if (text === "-i" || text === "--replace") return "{}";
  }
  return undefined;
}

/**
 * Whether a simple command runs, as commands or an interpreter's files, the names it is fed or
 * finds: xargs running an interpreter (anywhere after it: its options are not all known) or the
 * name itself (`xargs -I% ./%`); parallel (alone it runs its input lines); find's -exec, -ok and
 * the like running an interpreter or what it found (`-exec {} \;`).
 */
function runsFoundNames(texts: readonly string[]): boolean {
  const names = texts.map((text) => basename(text));
  if (names.includes("parallel")) return true;
  const xargs = names.indexOf("xargs");
  if (xargs !== -1) {
    const rest = texts.slice(xargs);
    const { invoked } = programOf(rest);
    const name = replaced(rest) ?? "{}";
    if (names.slice(xargs + 1).some((n) => INTERPRETERS.has(n)) || (name !== "" && invoked.includes(name)))
      return true;
  }
  if (!names.includes("find")) return false;
  for (let i = 0; i < texts.length; i++) {
    if (!FIND_EXECS.has(texts[i] as string)) continue;
    // The action's command runs to its `;` or `+`: read once, so many -exec words cost no more.
    let end = i + 1;
    while (end < texts.length && texts[end] !== ";" && texts[end] !== "+") end++;
    const { program, invoked } = programOf(texts.slice(i + 1, end));
    if (INTERPRETERS.has(program) || invoked.includes("{}")) return true;
    i = end;
  }
  return false;
}

/** Whether a simple command runs a file: an interpreter's, a program by path or expansion, a runner. */
function runsFile(
  program: string,
  invoked: string,
  programWord: ShellWord | undefined,
  inputs: number,
): boolean {
  return INTERPRETERS.has(program) || invoked.includes("/") || programWord?.literal === false || inputs > 0;
}

/**
 * Read one script (a command line, or a `sh -c` / `eval` script in it) into `into`. `outerRuns`:
 * the line holding this script runs a file besides the shell reading it (so may run its output).
 */
function read(script: ParsedScript, into: Unspelled, outerRuns = false): void {
  const { text, line } = script;
  // The lexer keeps no text of a substitution in its word: any word of such a script may hold one.
  const substitutes = text.includes("$(") || text.includes("`");
  const expands = (word: ShellWord) => !word.literal && (substitutes || word.text.includes("$"));
  if (EXTGLOB.test(text)) into.every = true;
  const inners: ParsedScript[] = [];
  let expanded = false;
  let lineRuns = outerRuns;
  let finds = false;
  for (const [index, { command, texts, program, invoked, args, inner }] of script.commands.entries()) {
    const words = command.words;
    const at = texts.length - args.length - 1;
    const programWord =
      texts[at] === invoked && (invoked !== "" || words[at]?.literal === false) ? words[at] : undefined;
    const readsInner = inner !== undefined;
    const scripted = (word: ShellWord) =>
      inner !== undefined && !substitutes && (program === "eval" || word.text === inner.text);
    // Where a filled-in expansion chooses what runs: the program, and an interpreter's arguments
    // and stdin — but not the script of `sh -c`/`eval`, read in turn (its `$VAR`s are in its text).
    const running: ShellWord[] = programWord === undefined ? [] : [programWord];
    if (INTERPRETERS.has(program)) {
      running.push(...words.slice(at + 1).filter((word) => !scripted(word)));
      running.push(...command.redirects.filter((r) => r.op.startsWith("<")).map((r) => r.target));
    }
    if (running.some(expands) || runsFoundNames(texts)) into.every = true;
    const inputs = runnerInputs(program, args);
    // A shell only reading its `-c` script runs no file of its own: the script is read in turn.
    if (runsFile(program, invoked, programWord, inputs.length) && !readsInner) lineRuns = true;
    finds ||= program === "find";
    const all = [...words.filter((word) => !scripted(word)), ...command.redirects.map((r) => r.target)];
    // A file it writes may be run later, by a command naming it only (`cp $X y`, then `bash y`).
    const writes = COPIERS.has(program) || command.redirects.some(writesFile);
    if (writes && all.some(expands)) into.every = true;
    // Its output may reach what runs (piped on, written to a file) unless it only shows something
    // (and is not in a script whose own output may: `sh -c 'cat $X' | bash`).
    const shows = !outerRuns && SHOWS.has(program) && line.plain && line.joiners[index] !== "|" && !writes;
    expanded ||= !shows && all.some(expands);
    for (const word of into.runs ? running : all) if (globbed(word)) addGlob(into, word.text);
    if (!into.runs) addFindGlobs(texts, into);
    for (const input of inputs) addGlob(into, input);
    if (inner !== undefined) inners.push(inner);
  }
  // In a line that runs a file, an expansion or a find anywhere may name the file it runs.
  if (lineRuns && (finds || expanded)) into.every = true;
  for (const inner of inners) read(inner, into, lineRuns);
}

/**
 * The files of `files` that `command` may use without spelling their names (see the module
 * comment), in their order; each is matched by its name (the last segment of its path). `runs`:
 * only those it may run, its globs read only where a program or an interpreter's input goes (for
 * files not there yet when the command is checked, which it creates itself). `command` as written
 * or parsed (parsed-script.ts).
 */
export function unspelledUses(
  command: string | ParsedScript,
  files: Iterable<string>,
  runs = false,
): string[] {
  const candidates = [...files];
  if (candidates.length === 0) return [];
  const found: Unspelled = { runs, every: false, globs: [], globWork: 0 };
  read(parseScript(command), found);
  if (found.every || found.globWork * candidates.length * MAX_NAME_CHARS > MAX_MATCH_WORK) return candidates;
  if (found.globs.length === 0) return [];
  return candidates.filter((file) => {
    const name = basename(trimTrailing(file, "/"));
    return found.globs.some((glob) => globMatches(glob, name));
  });
}
