/**
 * What aria2c and HTTPie / xh write, read from their words (marked where bash expands them:
 * download-marks.ts): aria2c's folder and log, HTTPie's and xh's --download and --output.
 */
import { mayHoldOptions, serverNamedFolder } from "./download-marks.js";
import { fullOption, namesFile } from "./downloader-words.js";

/** The value of a short (`-dX`, `-d X`) or long (`--dir=X`, `--dir X`) option at `i`, and the words it took. */
function optionValue(
  args: readonly string[],
  i: number,
  short: string,
  long: string,
): [string, number] | undefined {
  const arg = args[i] as string;
  if (arg === short || arg === long) return [args[i + 1] ?? "", 2];
  if (arg.startsWith(`${long}=`)) return [arg.slice(long.length + 1), 1];
  if (arg.startsWith(short) && !arg.startsWith("--")) return [arg.slice(short.length), 1];
  return undefined;
}

/**
 * aria2c saves under its folder (-d, --dir; the working folder by default) by names the URL, the
 * server, an -o, an input file (-i) or a torrent or metalink may give: the folder counts, and its
 * log (-l, --log) holds what the servers sent.
 */
export function aria2Targets(args: readonly string[]): string[] {
  let dir = "";
  const written: string[] = [];
  const expanded: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const folder = optionValue(args, i, "-d", "--dir");
    const log = folder ? undefined : optionValue(args, i, "-l", "--log");
    const taken = folder ?? log;
    if (taken) {
      if (folder) dir = taken[0];
      else written.push(taken[0]);
      i += taken[1] - 1;
    } else if (mayHoldOptions(args[i] as string)) expanded.push(args[i] as string);
  }
  return [serverNamedFolder(dir), ...written.filter(namesFile), ...expanded];
}

/**
 * HTTPie's long options beginning as --download and --output do, to which abbreviations are written
 * out (its argument parser takes `--down`, `--outp=x`).
 */
const HTTPIE_LONG = ["download", "default-scheme", "debug", "output", "offline"];

/**
 * HTTPie (`http`, `https`) and xh download with -d / --download: into -o / --output's file, else
 * into the working folder under a name the URL or the server gives (the folder counts); -o alone
 * writes the body to its file too. Short flags cluster (`-do x.sh`, `-dox.sh`). `configured`: its
 * default options may be the caller's (the folder counts).
 */
export function httpieTargets(args: readonly string[], configured: boolean): string[] {
  let download = false;
  const outputs: string[] = [];
  const expanded: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const arg = fullOption(args[i] as string, HTTPIE_LONG);
    if (arg === "--download") download = true;
    else if (arg === "--output") outputs.push(args[++i] ?? "");
    else if (arg.startsWith("--output=")) outputs.push(arg.slice("--output=".length));
    else if (/^-[A-Za-z]/.test(arg) && !arg.startsWith("--")) {
      for (let c = 1; c < arg.length; c += 1) {
        if (arg[c] === "d") download = true;
        if (arg[c] === "o") {
          outputs.push(arg.slice(c + 1) || (args[++i] ?? ""));
          break;
        }
      }
    } else if (mayHoldOptions(arg)) expanded.push(arg);
  }
  const files = outputs.filter(namesFile);
  // Its configuration (default options) may turn on --download too.
  const serverNamed = (download && files.length === 0) || configured;
  return [...files, ...(serverNamed ? [serverNamedFolder("")] : []), ...expanded];
}
