/**
 * Downloaded folders: the directories a command fills with code from elsewhere, so that every file
 * under them counts as downloaded (engine/permissions/download-execution.ts). `git clone <url>
 * [dir]` fills its target; extracting a downloaded archive (`tar x…f a.tgz`, `curl … | tar xz`,
 * `unzip a.zip`, `7z x a.7z`, `bsdtar`) fills its `-C` / `-d` / `-o` target, else the current
 * directory; `gunzip a.gz` (and the like) writes one file. A folder is written with a trailing `/`
 * (a file never is). Read from the words bash would see, leaning towards recording. A folder
 * recorded for the command's own directory is matched later by its path and name only; what the
 * command added to it is recorded by name as well (folder-listings.ts), so a later `bash a/run.sh`
 * after `tar xzf a.tgz` at the workspace root asks.
 */
import path from "node:path";
import { trimTrailing } from "../../core/trim-trailing.js";

/** Git options before the subcommand that take a value as the next word. */
const GIT_VALUED = new Set(["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"]);
/** `git clone` options that take a value as the next word. */
const CLONE_VALUED = new Set([
  "-b",
  "--branch",
  "-o",
  "--origin",
  "-c",
  "--config",
  "--depth",
  "--reference",
  "--reference-if-able",
  "--separate-git-dir",
  "-u",
  "--upload-pack",
  "--template",
  "--shallow-since",
  "--shallow-exclude",
  "-j",
  "--jobs",
  "--filter",
  "--server-option",
  "--bundle-uri",
]);

const DECOMPRESSORS = new Set(["gunzip", "bunzip2", "unxz", "unzstd", "uncompress", "unlzma"]);

/**
 * `dir` as a folder, with a trailing `/`, and otherwise as written: downloads.ts normalises it
 * unless a shell expansion in it may hold `..` (`-C "out/$D/.."` is not `out/`).
 */
function folder(dir: string): string {
  const written = dir === "" ? "." : dir;
  return written.endsWith("/") ? written : `${written}/`;
}

/** `dir` within `base` as the program reads it (an absolute `dir` stands alone), not normalised. */
function within(base: string, dir: string): string {
  return base === "" || dir.startsWith("/") ? dir : `${base}/${dir}`;
}

function gitCloneTarget(args: readonly string[]): string[] {
  let base = "";
  let i = 0;
  for (; i < args.length && (args[i] as string).startsWith("-"); i += 1) {
    if (args[i] === "-C") base = within(base, args[i + 1] ?? "");
    if (GIT_VALUED.has(args[i] as string)) i += 1;
  }
  if (args[i] !== "clone") return [];
  const positional: string[] = [];
  let bare = false;
  for (i += 1; i < args.length; i += 1) {
    const arg = args[i] as string;
    if (arg === "--bare" || arg === "--mirror") bare = true;
    if (arg === "--") positional.push(...args.slice(i + 1));
    if (arg === "--") break;
    if (CLONE_VALUED.has(arg)) i += 1;
    else if (!arg.startsWith("-")) positional.push(arg);
  }
  const [repo, dir] = positional;
  if (repo === undefined) return [];
  // trimTrailing: `/[/]+$/` took time quadratic in a run of slashes inside the word.
  const name = path.posix.basename(trimTrailing(repo, "/").replace(/^[^/]*:/, ""));
  return [folder(within(base, dir ?? (bare ? name : name.replace(/\.git$/, ""))))];
}

/** A tar (or bsdtar) extraction: its archive (`-` for stdin) and target, or undefined. */
function tarExtraction(args: readonly string[]): { archive: string; dir: string } | undefined {
  let extract = false;
  let archive = "-";
  let dir = ".";
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] as string;
    if (arg === "--extract" || arg === "--get") extract = true;
    else if (arg === "--file" || arg === "--directory") {
      if (arg === "--file") archive = args[i + 1] ?? "-";
      else dir = args[i + 1] ?? ".";
      i += 1;
    } else if (arg.startsWith("--file=")) archive = arg.slice("--file=".length);
    else if (arg.startsWith("--directory=")) dir = arg.slice("--directory=".length);
    else if (/^-?[A-Za-z]+$/.test(arg) && (arg.startsWith("-") || i === 0)) {
      // Bundled letters (`xzf a.tgz`, `-xzf a.tgz`, `-C dir`): each valued one takes the next word.
      const letters = arg.replace(/^-/, "");
      for (let c = 0; c < letters.length; c += 1) {
        const letter = letters[c];
        if (letter === "x") extract = true;
        if (letter !== "f" && letter !== "C") continue;
        const rest = arg.startsWith("-") ? letters.slice(c + 1) : "";
        const value = rest || (args[i + 1] ?? "");
        if (!rest) i += 1;
        if (letter === "f") archive = value;
        else dir = value;
        if (rest) break;
      }
    }
  }
  return extract ? { archive, dir } : undefined;
}

function unzipExtraction(args: readonly string[]): { archive: string; dir: string } | undefined {
  let archive: string | undefined;
  let dir = ".";
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] as string;
    if (arg === "-d") {
      dir = args[i + 1] ?? ".";
      i += 1;
    } else if (!arg.startsWith("-")) archive ??= arg;
  }
  return archive === undefined ? undefined : { archive, dir };
}

function sevenZipExtraction(args: readonly string[]): { archive: string; dir: string } | undefined {
  if (args[0] !== "x" && args[0] !== "e") return undefined;
  const archive = args.slice(1).find((arg) => !arg.startsWith("-"));
  const output = args.find((arg) => arg.startsWith("-o"));
  return archive === undefined ? undefined : { archive, dir: output?.slice(2) || "." };
}

/**
 * What a simple command writes from code elsewhere: a git clone's folder, or, when `downloaded`
 * says the archive it reads (`-` for its stdin) is a download, an extraction's folder or a
 * decompressed file. `program` as programOf reads it; `args` its arguments as downloads.ts marks
 * them where bash expands them (read as written here); paths as written, folders not normalised.
 */
export function folderDownloads(
  program: string,
  args: readonly string[],
  downloaded: (archive: string) => boolean,
): string[] {
  if (program === "git") return gitCloneTarget(args);
  const extraction =
    program === "tar" || program === "bsdtar"
      ? tarExtraction(args)
      : program === "unzip"
        ? unzipExtraction(args)
        : program === "7z" || program === "7za" || program === "7zr"
          ? sevenZipExtraction(args)
          : undefined;
  if (extraction !== undefined) return downloaded(extraction.archive) ? [folder(extraction.dir)] : [];
  const decompresses =
    DECOMPRESSORS.has(program) || ((program === "gzip" || program === "xz") && args.includes("-d"));
  if (!decompresses || args.some((arg) => arg === "-c" || arg === "--stdout")) return [];
  return args
    .filter((arg) => !arg.startsWith("-") && downloaded(arg))
    .map((arg) => arg.replace(/\.tgz$/, ".tar").replace(/\.(gz|bz2|xz|zst|Z|lzma)$/, ""));
}
