/**
 * The read-only shell command classifier behind the "read-only commands for this session" grant.
 *
 * A command line is read-only when every simple command in it (across `;`, `&&`, `||` and pipes)
 * runs a known binary in a form that only reads: ls, cat, grep, rg, find without -exec/-delete,
 * git status/log/diff/show, and similar. Redirection (other than to /dev/null), command
 * substitution, environment assignments, paths to binaries and unknown binaries are refused.
 * When in doubt the answer is "no": the command then simply asks for approval.
 */
import { parseCommandLine, type SimpleCommand } from "./shell-words.js";

type ArgCheck = (args: readonly string[]) => boolean;

const anyArgs: ArgCheck = () => true;

/** Refuse any argument equal to, or (for long options) starting with `name=`, one of `flags`. */
const without =
  (...flags: string[]): ArgCheck =>
  (args) =>
    !args.some((a) => flags.some((f) => a === f || (f.startsWith("--") && a.startsWith(`${f}=`))));

/** Refuse short-option clusters containing one of `letters` (e.g. `-rf` contains `f`). */
const withoutShort =
  (letters: string, ...longFlags: string[]): ArgCheck =>
  (args) =>
    without(...longFlags)(args) &&
    !args.some((a) => /^-[A-Za-z]+$/.test(a) && [...letters].some((l) => a.includes(l)));

const positional = (args: readonly string[]) => args.filter((a) => !a.startsWith("-"));

const FIND_ACTIONS = [
  "-exec",
  "-execdir",
  "-ok",
  "-okdir",
  "-delete",
  "-fprint",
  "-fprint0",
  "-fprintf",
  "-fls",
];

/** Binaries that only read, with a check on their arguments where some forms write or execute. */
const READ_ONLY_BINARIES: ReadonlyMap<string, ArgCheck> = new Map<string, ArgCheck>([
  ["ls", anyArgs],
  ["cat", anyArgs],
  ["head", anyArgs],
  ["tail", withoutShort("fF", "--follow", "--retry")],
  ["wc", anyArgs],
  ["grep", anyArgs],
  ["egrep", anyArgs],
  ["fgrep", anyArgs],
  ["rg", without("--pre", "--search-zip", "-z")],
  ["find", without(...FIND_ACTIONS)],
  ["pwd", anyArgs],
  ["echo", anyArgs],
  ["printf", without("-v")],
  ["cd", anyArgs],
  ["stat", anyArgs],
  ["file", without("-C", "--compile")],
  ["du", anyArgs],
  ["df", anyArgs],
  ["tree", without("-o", "-R")],
  ["which", anyArgs],
  ["whoami", anyArgs],
  ["id", anyArgs],
  ["uname", anyArgs],
  ["date", withoutShort("s", "--set")],
  ["basename", anyArgs],
  ["dirname", anyArgs],
  ["realpath", anyArgs],
  ["readlink", anyArgs],
  ["sort", withoutShort("o", "--output", "--compress-program")],
  ["uniq", (args) => positional(args).length <= 1],
  ["cut", anyArgs],
  ["tr", anyArgs],
  ["diff", anyArgs],
  ["cmp", anyArgs],
  ["comm", anyArgs],
  ["nl", anyArgs],
  ["tac", anyArgs],
  ["rev", anyArgs],
  ["fold", anyArgs],
  ["column", anyArgs],
  ["jq", anyArgs],
  ["printenv", anyArgs],
  ["true", anyArgs],
  ["false", anyArgs],
  ["test", anyArgs],
  ["seq", anyArgs],
  ["sha256sum", anyArgs],
  ["sha1sum", anyArgs],
  ["md5sum", anyArgs],
  ["cksum", anyArgs],
  ["od", anyArgs],
  ["hexdump", anyArgs],
  ["strings", anyArgs],
  ["xxd", withoutShort("r", "-revert")],
  ["git", isReadOnlyGit],
]);

/** git subcommands that only read, with the argument check for their read forms. */
const GIT_SUBCOMMANDS: ReadonlyMap<string, ArgCheck> = new Map<string, ArgCheck>([
  ["status", anyArgs],
  ["log", anyArgs],
  ["diff", anyArgs],
  ["show", anyArgs],
  ["blame", anyArgs],
  ["shortlog", anyArgs],
  ["describe", anyArgs],
  ["rev-parse", anyArgs],
  ["ls-files", anyArgs],
  ["ls-tree", anyArgs],
  ["grep", without("-O", "--open-files-in-pager")],
  // Listing forms only: any positional argument would create, and these flags change branches.
  [
    "branch",
    (args) =>
      positional(args).length === 0 &&
      withoutShort(
        "dDmMcCfu",
        "--delete",
        "--move",
        "--copy",
        "--force",
        "--set-upstream-to",
        "--unset-upstream",
        "--edit-description",
        "--track",
        "--no-track",
      )(args),
  ],
  ["tag", isTagListing],
  ["remote", (args) => args.every((a) => a === "-v" || a === "--verbose")],
]);

/** `git tag`, or `git tag -l [pattern…]`: any other option or a bare name creates or deletes. */
function isTagListing(args: readonly string[]): boolean {
  const listing = args.some((a) => a === "-l" || a === "--list");
  return args.every((a) => a === "-l" || a === "--list" || (listing && !a.startsWith("-")));
}

function isReadOnlyGit(args: readonly string[]): boolean {
  let i = 0;
  // Global options that only change where or how git reads.
  while (i < args.length) {
    const a = args[i]!;
    if (a === "--no-pager" || a === "-P" || a === "--no-optional-locks") i++;
    else if (a === "-C") i += 2;
    else break;
  }
  const sub = args[i];
  if (sub === undefined) return false;
  const check = GIT_SUBCOMMANDS.get(sub);
  const rest = args.slice(i + 1);
  // --output writes a file; --ext-diff / --textconv run configured programs.
  return check !== undefined && without("--output", "--ext-diff", "--textconv")(rest) && check(rest);
}

function isReadOnlySimpleCommand(words: SimpleCommand): boolean {
  const [binary, ...args] = words;
  if (binary === undefined) return false;
  // Bare names only: `./ls` or `/tmp/cat` could be anything; `A=b cmd` could inject LD_PRELOAD.
  if (binary.includes("/") || binary.includes("=")) return false;
  const check = READ_ONLY_BINARIES.get(binary);
  return check?.(args) ?? false;
}

/** Whether a shell command line only reads (see the module header for the rules). */
export function isReadOnlyCommand(command: string): boolean {
  const parsed = parseCommandLine(command);
  return parsed?.commands.every(isReadOnlySimpleCommand) ?? false;
}
