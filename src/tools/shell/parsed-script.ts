/**
 * A shell command parsed once for every check that reads it (the hard-deny command rules, the
 * download floor's rules, download detection): its lexed line and, for each simple command, its
 * program and the script a shell's `-c` or `eval` runs in turn, parsed too (to
 * MAX_SCRIPT_NESTING). One permission decision used to lex a command once per check (up to six
 * times), and the reviewer's floor lexed it all again right after; the checks now take this form,
 * handed on, and the last command parsed is kept, so the checks of one decision share one parse.
 * Keeping it is safe across sessions: a parse depends on the command's text alone (no session,
 * folder or recorded files, which the checks apply afterwards), is made in one synchronous call
 * and is only read, so a kept parse is exactly what parsing again would give; decisions that
 * interleave only parse again.
 */
import { innerScript, MAX_SCRIPT_NESTING, programOf } from "./shell-program.js";
import { type LexedLine, lexCommandLine, type ShellCommand } from "./shell-words.js";

/** One simple command of a parsed script. */
export interface ParsedCommand {
  /** Its words and redirections, as lexed (shell-words.ts). */
  readonly command: ShellCommand;
  /** Its words' texts. */
  readonly texts: readonly string[];
  /** Its program, as programOf reads its words (the name, `tool.sh` of `./tool.sh`). */
  readonly program: string;
  /** Its program as written (`./tool.sh`), after assignments and wrappers such as `env`. */
  readonly invoked: string;
  /** The texts after the program: its arguments. */
  readonly args: readonly string[];
  /** The script it runs in turn (`sh -c`, `eval`), parsed, when one is read at this depth. */
  readonly inner: ParsedScript | undefined;
}

/** A command line, parsed (see the module header). */
export interface ParsedScript {
  readonly text: string;
  readonly line: LexedLine;
  /** The line's simple commands, in its order. */
  readonly commands: readonly ParsedCommand[];
}

function parse(text: string, depth: number): ParsedScript {
  const line = lexCommandLine(text);
  const commands = line.commands.map((command): ParsedCommand => {
    const texts = command.words.map((word) => word.text);
    const { program, invoked, args } = programOf(texts);
    const script = depth < MAX_SCRIPT_NESTING ? innerScript(program, args) : undefined;
    const inner = script === undefined ? undefined : parse(script, depth + 1);
    return { command, texts, program, invoked, args, inner };
  });
  return { text, line, commands };
}

let last: ParsedScript | undefined;

/**
 * `command` parsed (see the module header), or itself when it is parsed already; the same object
 * for the same command as the last one parsed.
 */
export function parseScript(command: string | ParsedScript): ParsedScript {
  if (typeof command !== "string") return command;
  if (last?.text !== command) last = parse(command, 0);
  return last;
}

/**
 * Whether bash names the command's program by a parameter expansion or a substitution (`$C`,
 * `"$RUN"`, `$(echo curl)`, whose text the lexer leaves empty): it could be any program. Braces,
 * `[` and globs are not counted: `{ …; }`, `[ -f x ]`, `./*.sh`.
 */
export function programNamedByExpansion({ command, invoked }: ParsedCommand): boolean {
  return command.words.some(
    (word) => word.text === invoked && !word.literal && (word.text === "" || /[$`]/.test(word.text)),
  );
}
