/**
 * find for the read-only grant: starting points, then an expression built only from tests,
 * position options, operators and the printing actions. -exec, -execdir, -ok, -okdir, -delete
 * and the -f* actions that write files are refused, as is every primary not listed here.
 */

/** Primaries that take no argument. */
const NO_ARGUMENT = new Set([
  "-depth",
  "-mount",
  "-xdev",
  "-follow",
  "-noleaf",
  "-ignore_readdir_race",
  "-noignore_readdir_race",
  "-daystart",
  "-empty",
  "-readable",
  "-writable",
  "-executable",
  "-true",
  "-false",
  "-nouser",
  "-nogroup",
  "-print",
  "-print0",
  "-ls",
  "-prune",
  "-quit",
  "-not",
  "-a",
  "-and",
  "-o",
  "-or",
  "!",
  "(",
  ")",
  ",",
]);

/** find's tests whose argument is a glob matched against names or paths (`-name 'inst*'`). */
export const FIND_GLOB_TESTS: ReadonlySet<string> = new Set([
  "-name",
  "-iname",
  "-path",
  "-ipath",
  "-wholename",
  "-iwholename",
  "-lname",
  "-ilname",
]);

/** find's tests whose argument is a regex matched against paths. */
export const FIND_REGEX_TESTS: ReadonlySet<string> = new Set(["-regex", "-iregex"]);

/** Primaries that take one argument. */
const ONE_ARGUMENT = new Set([
  ...FIND_GLOB_TESTS,
  ...FIND_REGEX_TESTS,
  "-regextype",
  "-type",
  "-xtype",
  "-size",
  "-mtime",
  "-atime",
  "-ctime",
  "-mmin",
  "-amin",
  "-cmin",
  "-used",
  "-newer",
  "-anewer",
  "-cnewer",
  "-perm",
  "-user",
  "-group",
  "-uid",
  "-gid",
  "-links",
  "-inum",
  "-samefile",
  "-fstype",
  "-maxdepth",
  "-mindepth",
  "-printf",
]);

const LEADING_OPTIONS = new Set(["-H", "-L", "-P"]);

/** Whether `find` with these arguments only reads and prints. */
export function isReadOnlyFind(args: readonly string[]): boolean {
  let i = 0;
  while (i < args.length && LEADING_OPTIONS.has(args[i] as string)) i += 1;
  // Starting points: everything before the first word that begins an expression.
  while (i < args.length) {
    const arg = args[i] as string;
    if (arg.startsWith("-") || arg === "!" || arg === "(" || arg === ")" || arg === ",") break;
    i += 1;
  }
  while (i < args.length) {
    const arg = args[i] as string;
    if (NO_ARGUMENT.has(arg)) i += 1;
    else if (ONE_ARGUMENT.has(arg) && i + 1 < args.length) i += 2;
    else return false;
  }
  return true;
}
