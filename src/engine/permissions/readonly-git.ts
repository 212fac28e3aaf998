/**
 * git for the read-only grant. A repository's own `.git/config` is attacker-writable (a cloned
 * or fetched repo, a file the model wrote), and git runs programs from it: `core.fsmonitor` on
 * every status, `diff.external` and textconv drivers on diffs, `gpg.program` when verifying
 * signatures, hooks when the index is written, a pager. So only listed subcommands (never an
 * alias: an alias is not a subcommand name here) with listed options count as read-only, and
 * they run with those programs switched off on the command line — `-c core.fsmonitor=
 * -c core.hooksPath=/dev/null --no-pager --no-ext-diff --no-textconv` and friends — which
 * `protectGit` injects. Options like --no-ext-diff reach only the git we start, while `-c`
 * settings reach the gits it starts in submodules too; so `-c diff.submodule=short` keeps diff,
 * log and show from starting a `git diff` per submodule (`diff.submodule=diff` would, and that
 * child runs the submodule's diff.external and textconv), and `-c submodule.recurse=false` keeps
 * the repository's config from sending grep or ls-files into submodules. No transport starts
 * either (a partial clone's lazy fetch of a missing blob runs the config's uploadpack,
 * sshCommand, ext:: URL or remote helper): the line sets `GIT_ALLOW_PROTOCOL=no_transport`, which
 * outranks every protocol.*.allow, and `GIT_NO_LAZY_FETCH=1` (git 2.45 and the 2.39.4+ security
 * releases). Filter drivers (`filter.*.clean`) cannot be switched off this way; the sandbox is
 * what contains them.
 */
import { parseArgs } from "./option-spec.js";
import { SUBCOMMANDS } from "./readonly-git-subcommands.js";

/**
 * Assignments placed before every read-only git command (plain words, so bash takes them as
 * such): no lazy fetch where git knows GIT_NO_LAZY_FETCH, and no protocol allowed but
 * "no_transport", which only a remote helper could be named: git runs one as
 * `git remote-no_transport`, not a program anyone installs nor an alias (a config key has no
 * `_`), and `-c help.autocorrect=0` below keeps git from running a near alias in its place.
 * (An empty value would allow the helper "" of `remote.<name>.vcs=`, so `alias.remote-`.)
 */
const PROTECTIVE_ENV: readonly string[] = Object.freeze([
  "GIT_ALLOW_PROTOCOL=no_transport",
  "GIT_NO_LAZY_FETCH=1",
]);

/** Global options placed before every read-only git subcommand. */
const PROTECTIVE_GLOBALS: readonly string[] = Object.freeze([
  "-c",
  "core.fsmonitor=",
  "-c",
  "core.hooksPath=/dev/null",
  "-c",
  "log.showSignature=false",
  "-c",
  "gpg.program=false",
  "-c",
  "gpg.ssh.program=false",
  "-c",
  "gpg.x509.program=false",
  "-c",
  "diff.submodule=short",
  "-c",
  "submodule.recurse=false",
  "-c",
  "help.autocorrect=0",
  "--no-pager",
  "--no-optional-locks",
]);

const DIFF_SWITCHES: readonly string[] = Object.freeze(["--no-ext-diff", "--no-textconv"]);

/** Global options we accept before the subcommand (value-taking ones listed separately). */
const GLOBAL_FLAGS = new Set([
  "--no-pager",
  "-P",
  "--no-optional-locks",
  "--literal-pathspecs",
  "--glob-pathspecs",
  "--noglob-pathspecs",
  "--icase-pathspecs",
]);

/**
 * The words of a read-only git command (`args` are git's) as it runs, with its protection
 * injected — environment assignments, `git`, options — or undefined when it is not read-only.
 */
export function protectGit(args: readonly string[]): string[] | undefined {
  const globals: string[] = [];
  let i = 0;
  while (i < args.length) {
    const arg = args[i] as string;
    if (GLOBAL_FLAGS.has(arg)) globals.push(arg);
    else if (arg === "-C" && i + 1 < args.length) globals.push(arg, args[++i] as string);
    else break;
    i += 1;
  }
  const sub = args[i];
  const entry = sub === undefined ? undefined : SUBCOMMANDS.get(sub);
  if (sub === undefined || entry === undefined) return undefined;
  const rest = args.slice(i + 1);
  if (parseArgs(entry.spec, rest) === undefined) return undefined;
  const switches = entry.diff === "both" ? DIFF_SWITCHES : entry.diff === "textconv" ? ["--no-textconv"] : [];
  return [...PROTECTIVE_ENV, "git", ...PROTECTIVE_GLOBALS, ...globals, sub, ...switches, ...rest];
}
