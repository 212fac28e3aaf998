/**
 * The program a simple command runs, from its words after quote removal (shell-words.ts): past
 * variable assignments and wrappers (`sudo -u x`, `env A=b`, `timeout 5`, `xargs`, reserved words),
 * and the script a shell's `-c` or `eval` runs in turn. Shared by the hard-deny rules, the
 * download rules and download recording, so all of them see the same program.
 */
import path from "node:path";

const WRAPPERS = new Set([
  "sudo",
  "doas",
  "env",
  "command",
  "builtin",
  "exec",
  "nice",
  "ionice",
  "nohup",
  "time",
  "stdbuf",
  "timeout",
  "xargs",
  "busybox",
  "chroot",
  "setsid",
  "unbuffer",
  // Reserved words that may precede a command.
  "{",
  "!",
  "if",
  "then",
  "else",
  "elif",
  "do",
  "while",
  "until",
]);
/** Wrapper options whose value is the next word (sudo -u USER, xargs -I {}, timeout -s SIG). */
const WRAPPER_VALUED = new Set(["-u", "-g", "-U", "-C", "-p", "-I", "-k", "-s", "-n", "-E", "-L"]);

/**
 * The program a simple command runs, looking past assignments and wrappers: as a bare name
 * (`program`), as written (`invoked`, e.g. `./tool.sh`), and its arguments.
 */
export function programOf(words: readonly string[]): {
  program: string;
  invoked: string;
  args: readonly string[];
} {
  let i = 0;
  while (i < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i] as string)) i += 1;
  while (i < words.length && WRAPPERS.has(path.posix.basename(words[i] as string))) {
    i += 1;
    // A wrapper's own options, durations (timeout 5) and variables (env A=b).
    while (i < words.length && /^-|^\d|^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i] as string)) {
      i += WRAPPER_VALUED.has(words[i] as string) ? 2 : 1;
    }
  }
  const invoked = words[i] ?? "";
  return { program: path.posix.basename(invoked), invoked, args: words.slice(i + 1) };
}

const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh", "ash", "fish"]);

/** How deep scripts inside scripts (`sh -c "bash -c '…'"`) are read. */
export const MAX_SCRIPT_NESTING = 4;

/** The script a shell or eval would run from these arguments, if any. */
export function innerScript(program: string, args: readonly string[]): string | undefined {
  if (program === "eval") return args.join(" ");
  if (!SHELLS.has(program)) return undefined;
  // A short-option cluster holding `c` (`-c`, `-xc`, `-lc`). Not /^-[A-Za-z]*c[A-Za-z]*$/: that
  // tries every `c` as the split point, quadratic in a long `-ccc…c1` word of a model's command.
  const flag = args.findIndex((arg) => /^-[A-Za-z]+$/.test(arg) && arg.includes("c"));
  return flag === -1 ? undefined : args.slice(flag + 1).find((arg) => !arg.startsWith("-"));
}
