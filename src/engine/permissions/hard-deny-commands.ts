/**
 * Hard denies on shell commands, matched on the words the shell lexer produces after quote
 * removal (so `r''m -rf "/"`, `\rm -rf /.`, `$'\x72m' -rf //` are all `rm -rf /`), with target
 * paths normalised (`/.`, `//`, `/usr/..` are `/`; `~` and `${HOME}` are the home directory).
 * Wrappers (sudo, env, nohup, timeout, xargs…) are looked through, and the script of `sh -c`,
 * `bash -c` and `eval` is lexed in turn. This is a speed bump in front of the sandbox, not the
 * wall: it stops the obvious disasters by name; the sandbox contains whatever slips past.
 */
import path from "node:path";
import { type ParsedScript, parseScript } from "../../tools/shell/parsed-script.js";
import { programOf } from "../../tools/shell/shell-program.js";

/** One command-level rule: a label and a test on the program name and its argument words. */
interface CommandRule {
  readonly label: string;
  readonly test: (program: string, args: readonly string[]) => boolean;
}

const PROTECTED = new Set([
  "/",
  "$HOME",
  "/root",
  "/home",
  "/usr",
  "/etc",
  "/bin",
  "/sbin",
  "/lib",
  "/lib64",
  "/boot",
  "/var",
  "/opt",
  "/srv",
  "/dev",
  "/proc",
  "/sys",
]);

/** `~`, `~/x`, `${HOME}`, `"$HOME"` as `$HOME…`; then a POSIX-normalised path without a trailing slash. */
export function normaliseTarget(word: string): string {
  const home = word.replace(/^~(?=\/|$)/, "$HOME").replace(/^\$\{HOME\}/, "$HOME");
  const normal = path.posix.normalize(home);
  return normal.length > 1 ? normal.replace(/\/+$/, "") : normal;
}

/** Whether a target is /, the home directory, a top-level system folder, or everything in one. */
export function isProtectedTarget(word: string): boolean {
  const target = normaliseTarget(word);
  if (PROTECTED.has(target)) return true;
  const glob = /^(.*?)\/+\.?\*$/.exec(target);
  return glob !== null && PROTECTED.has(glob[1] === "" ? "/" : (glob[1] as string));
}

/** Whether option words switch on recursion: -r/-R in a short cluster, or --recursive (or a prefix). */
function recursive(args: readonly string[]): boolean {
  return args.some(
    (arg) =>
      (/^-[A-Za-z]+$/.test(arg) && /[rR]/.test(arg)) ||
      (arg.startsWith("--") && arg.length > 4 && "--recursive".startsWith(arg)),
  );
}

const operands = (args: readonly string[]) => args.filter((arg) => !arg.startsWith("-") || arg === "-");

const COMMAND_RULES: readonly CommandRule[] = [
  {
    label: "recursive delete of /, the home directory or a system folder",
    test: (program, args) => program === "rm" && recursive(args) && operands(args).some(isProtectedTarget),
  },
  {
    label: "find deleting or executing from /, the home directory or a system folder",
    test: (program, args) =>
      program === "find" &&
      args.some((arg) => /^-(?:delete|exec|execdir|ok|okdir)$/.test(arg)) &&
      args.some((arg) => !arg.startsWith("-") && isProtectedTarget(arg)),
  },
  {
    label: "recursive permission change of / or a system folder",
    test: (program, args) =>
      /^ch(?:mod|own|grp)$/.test(program) && recursive(args) && operands(args).some(isProtectedTarget),
  },
];

/**
 * Each simple command's words then its redirections' operators and targets, those of the scripts
 * it runs in turn (`sh -c`, `eval`) after it, for rule matching (these rules' and the download
 * floor's). `command` as written or parsed (parsed-script.ts).
 */
export function lexedCommandWords(command: string | ParsedScript): string[][] {
  const out: string[][] = [];
  for (const { command: simple, texts, inner } of parseScript(command).commands) {
    out.push([...texts, ...simple.redirects.flatMap((r) => [r.op, r.target.text])]);
    if (inner !== undefined) for (const words of lexedCommandWords(inner)) out.push(words);
  }
  return out;
}

/** The label of the first command rule a shell command line hits, if any. */
export function matchCommandRules(command: string): string | undefined {
  for (const words of lexedCommandWords(command)) {
    const { program, args } = programOf(words);
    const hit = COMMAND_RULES.find((rule) => rule.test(program, args));
    if (hit) return hit.label;
  }
  return undefined;
}
