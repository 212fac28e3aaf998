/**
 * A small shell-command splitter for safety heuristics (download detection, download-then-execute
 * checks): it splits a command line into simple commands at `;`, `&&`, `||`, `|`, `&`, newlines
 * and parentheses, honours quotes and backslashes, and separates redirections. It does not expand
 * anything and is deliberately not a full shell parser.
 */

/** A redirection such as `> out.txt` or `2>> log`. */
export interface Redirect {
  /** The operator without its file-descriptor prefix: ">", ">>", "<", "&>", "&>>". */
  readonly op: string;
  readonly target: string;
}

/** One simple command: its words and redirections, and whether its stdin is piped from the previous one. */
export interface SimpleCommand {
  readonly words: readonly string[];
  readonly redirects: readonly Redirect[];
  readonly pipedFromPrevious: boolean;
}

const SEPARATORS = new Set([";", "&&", "||", "|", "&", "\n", "(", ")", "|&"]);
const REDIRECT_PATTERN = /^(\d*)(>>|>|<|&>>|&>)$/;

type Token =
  | { readonly kind: "word"; readonly text: string }
  | { readonly kind: "op"; readonly text: string };

function tokenize(command: string): Token[] {
  const tokens: Token[] = [];
  let word = "";
  let inWord = false;
  const flush = () => {
    if (inWord) tokens.push({ kind: "word", text: word });
    word = "";
    inWord = false;
  };
  for (let i = 0; i < command.length; i += 1) {
    const ch = command[i] as string;
    if (ch === "'") {
      const end = command.indexOf("'", i + 1);
      const stop = end === -1 ? command.length : end;
      word += command.slice(i + 1, stop);
      inWord = true;
      i = stop;
    } else if (ch === '"') {
      inWord = true;
      for (i += 1; i < command.length && command[i] !== '"'; i += 1) {
        if (command[i] === "\\" && i + 1 < command.length) i += 1;
        word += command[i];
      }
    } else if (ch === "\\") {
      if (command[i + 1] === "\n") i += 1;
      else if (i + 1 < command.length) {
        word += command[i + 1];
        inWord = true;
        i += 1;
      }
    } else if (ch === "#" && !inWord) {
      const end = command.indexOf("\n", i);
      i = (end === -1 ? command.length : end) - 1;
    } else if (ch === " " || ch === "\t") {
      flush();
    } else if (";&|\n()<>".includes(ch)) {
      const redirectFd = /^\d+$/.test(word) && (ch === ">" || ch === "<") ? word : "";
      if (redirectFd) {
        word = "";
        inWord = false;
      } else flush();
      const two = command.slice(i, i + 2);
      const three = command.slice(i, i + 3);
      let op: string = ch;
      if (three === "&>>") op = three;
      else if (["&&", "||", ">>", "&>", "|&"].includes(two)) op = two;
      if (op === ">" && command[i + 1] === "&") op = ">&";
      tokens.push({ kind: "op", text: redirectFd + op });
      i += op.length - 1;
    } else {
      word += ch;
      inWord = true;
    }
  }
  flush();
  return tokens;
}

/** Split a command line into simple commands. */
export function splitCommands(command: string): SimpleCommand[] {
  const commands: SimpleCommand[] = [];
  let words: string[] = [];
  let redirects: Redirect[] = [];
  let piped = false;
  let nextPiped = false;
  const finish = () => {
    if (words.length > 0 || redirects.length > 0)
      commands.push({ words, redirects, pipedFromPrevious: piped });
    words = [];
    redirects = [];
    piped = nextPiped;
    nextPiped = false;
  };
  const tokens = tokenize(command);
  for (let i = 0; i < tokens.length; i += 1) {
    const token = tokens[i] as Token;
    if (token.kind === "word") {
      words.push(token.text);
      continue;
    }
    if (token.text.endsWith(">&")) {
      i += 1;
      continue;
    }
    const redirect = REDIRECT_PATTERN.exec(token.text);
    if (redirect) {
      const next = tokens[i + 1];
      if (next?.kind === "word") {
        redirects.push({ op: redirect[2] as string, target: next.text });
        i += 1;
      }
      continue;
    }
    if (SEPARATORS.has(token.text)) {
      nextPiped = token.text === "|" || token.text === "|&";
      finish();
    }
  }
  nextPiped = false;
  finish();
  return commands;
}

const WRAPPERS = new Set(["sudo", "env", "nohup", "time", "command", "exec", "nice", "stdbuf"]);

/** The program a simple command runs (after env assignments and wrappers like sudo) and its arguments. */
export function programOf(command: SimpleCommand): {
  readonly program: string;
  readonly args: readonly string[];
} {
  let index = 0;
  const { words } = command;
  while (index < words.length) {
    const word = words[index] as string;
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(word) || WRAPPERS.has(word) || (index > 0 && word.startsWith("-"))) {
      index += 1;
      continue;
    }
    break;
  }
  return { program: words[index] ?? "", args: words.slice(index + 1) };
}

/** The last path segment of a program word: "/usr/bin/curl" → "curl". */
export function programName(program: string): string {
  return program.slice(program.lastIndexOf("/") + 1);
}
