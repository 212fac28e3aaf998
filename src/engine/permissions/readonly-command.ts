/**
 * The read-only shell command classifier behind the "read-only commands for this session" grant.
 *
 * A command line is read-only when it is plain simple commands (joined by `;`, `&&`, `||`, `|`)
 * and every one of them runs a listed program (a bare name, no `VAR=` prefix) whose every
 * argument the program's allow-list accounts for (readonly-programs.ts, readonly-find.ts,
 * readonly-git.ts). No word may be one bash would expand (unquoted `{ } * ? [ ~`, any `$`),
 * and the only redirections are to /dev/null, fd duplicates and reading a file with `<`. When in
 * doubt the answer is "no": the command then simply asks for approval. A read-only line that runs
 * git comes back rewritten with git's protective environment and options; that line is what runs.
 */
import { parseArgs } from "./option-spec.js";
import { ANY_ARGUMENTS, isReadOnlyTest, READ_ONLY_PROGRAMS } from "./readonly-programs.js";
import { isReadOnlyFind } from "./readonly-find.js";
import { protectGit } from "./readonly-git.js";
import {
  type LexedLine,
  lexCommandLine,
  quoteWord,
  type ShellCommand,
  type ShellRedirect,
} from "../../tools/shell/shell-words.js";

/** The classifier's answer: read-only (with the line to run) or not. */
export type ReadOnlyVerdict =
  | { readonly readOnly: true; readonly command: string }
  | { readonly readOnly: false };

const NOT_READ_ONLY: ReadOnlyVerdict = Object.freeze({ readOnly: false });

function safeRedirect(redirect: ShellRedirect): boolean {
  const { op, target } = redirect;
  if (!target.literal) return false;
  if (/^\d?>>?$|^&>>?$/.test(op)) return target.text === "/dev/null";
  if (/^\d?>&$/.test(op)) return /^[12]$/.test(target.text);
  return /^\d?<$/.test(op); // reading a file on stdin
}

/** The argument words to run for one simple command, or undefined when it is not read-only. */
function readOnlyWords(command: ShellCommand): string[] | undefined {
  if (!command.words.every((word) => word.literal) || !command.redirects.every(safeRedirect))
    return undefined;
  const [program, ...args] = command.words.map((word) => word.text);
  // Bare names only: `./ls` or `/tmp/cat` could be anything; `A=b cmd` could set LD_PRELOAD.
  if (program === undefined || program.includes("/") || program.includes("=")) return undefined;
  if (program === "git") return protectGit(args);
  if (ANY_ARGUMENTS.has(program)) return [program, ...args];
  if (program === "test") return isReadOnlyTest(args) ? [program, ...args] : undefined;
  if (program === "find") return isReadOnlyFind(args) ? [program, ...args] : undefined;
  const spec = READ_ONLY_PROGRAMS.get(program);
  return spec !== undefined && parseArgs(spec, args) !== undefined ? [program, ...args] : undefined;
}

function render(words: readonly string[], redirects: readonly ShellRedirect[]): string {
  return [...words.map(quoteWord), ...redirects.map((r) => `${r.op}${quoteWord(r.target.text)}`)].join(" ");
}

/** The whole line rebuilt from its words (exact, since every word is literal). */
function rebuild(line: LexedLine, runs: readonly (readonly string[])[]): string {
  return line.commands
    .map((command, index) => {
      const text = render(runs[index] as readonly string[], command.redirects);
      const joiner = line.joiners[index];
      return joiner === undefined ? text : `${text} ${joiner}`;
    })
    .join(" ");
}

/** Classify a shell command line (see the module header for the rules). */
export function classifyReadOnly(command: string): ReadOnlyVerdict {
  const line = lexCommandLine(command);
  if (!line.plain || line.commands.length === 0) return NOT_READ_ONLY;
  const runs: string[][] = [];
  for (const simple of line.commands) {
    const words = readOnlyWords(simple);
    if (words === undefined) return NOT_READ_ONLY;
    runs.push(words);
  }
  const rewritten = line.commands.some((simple) => simple.words[0]?.text === "git");
  return { readOnly: true, command: rewritten ? rebuild(line, runs) : command };
}
