/**
 * A small, deliberately strict POSIX-shell lexer for permission checks.
 *
 * It splits a command line into simple commands (separated by `;`, `&&`, `||`, `|`, newlines)
 * made of unquoted words. Anything it cannot vouch for — command or process substitution,
 * subshells and brace groups, backgrounding, input redirection, here-documents, output
 * redirection to anything but /dev/null (or fd duplication like `2>&1`), unterminated quotes —
 * makes it return `undefined`, so callers treat the command as not read-only.
 */

/** One simple command: its words after quote removal. */
export type SimpleCommand = readonly string[];

/** How two simple commands are joined. */
export type Joiner = ";" | "&&" | "||" | "|";

export interface ParsedCommandLine {
  readonly commands: readonly SimpleCommand[];
  readonly joiners: readonly Joiner[];
}

const SAFE_REDIRECT_TARGETS = new Set(["/dev/null", "&1", "&2"]);

class Lexer {
  private i = 0;
  private word: string | undefined;
  private current: string[] = [];
  readonly commands: SimpleCommand[] = [];
  readonly joiners: Joiner[] = [];

  constructor(private readonly src: string) {}

  /** Lex the whole line; false when something unsafe or malformed was found. */
  run(): boolean {
    const s = this.src;
    while (this.i < s.length) {
      const c = s[this.i]!;
      if (c === " " || c === "\t") {
        this.endWord();
        this.i++;
      } else if (c === "\n" || c === ";") {
        if (!this.endCommand(";")) return false;
        this.i++;
      } else if (c === "|") {
        const op = s[this.i + 1] === "|" ? "||" : "|";
        if (s[this.i + 1] === "&") return false; // |& pipes stderr too; keep the grammar small
        if (!this.endCommand(op)) return false;
        this.i += op.length;
      } else if (c === "&") {
        if (s[this.i + 1] === "&") {
          if (!this.endCommand("&&")) return false;
          this.i += 2;
        } else if (s[this.i + 1] === ">") {
          this.endWord();
          this.i += 1;
          if (!this.redirect()) return false;
        } else return false; // backgrounding
      } else if (c === ">") {
        if (this.word !== undefined && /^\d+$/.test(this.word)) this.word = undefined; // fd number
        this.endWord();
        if (!this.redirect()) return false;
      } else if (c === "<" || c === "(" || c === ")" || c === "`") {
        return false;
      } else if (c === "'") {
        const end = s.indexOf("'", this.i + 1);
        if (end < 0) return false;
        this.append(s.slice(this.i + 1, end));
        this.i = end + 1;
      } else if (c === '"') {
        if (!this.doubleQuoted()) return false;
      } else if (c === "\\") {
        if (this.i + 1 >= s.length) return false;
        if (s[this.i + 1] !== "\n") this.append(s[this.i + 1]!);
        this.i += 2;
      } else if (c === "$") {
        if (!this.dollar()) return false;
      } else {
        this.append(c);
        this.i++;
      }
    }
    return this.endCommand(undefined);
  }

  private append(text: string): void {
    this.word = (this.word ?? "") + text;
  }

  private endWord(): void {
    if (this.word !== undefined) this.current.push(this.word);
    this.word = undefined;
  }

  private endCommand(joiner: Joiner | undefined): boolean {
    this.endWord();
    if (this.current.length === 0) {
      // An empty command is fine only at the very end after `;` (e.g. "ls;") or for a blank line.
      if (joiner === undefined) return this.joiners.length === 0 || this.joiners.at(-1) === ";";
      if (joiner === ";" && (this.commands.length === 0 || this.joiners.at(-1) === ";")) return true;
      return false;
    }
    if (this.current[0] === "{" || this.current[0] === "}") return false; // brace group
    this.commands.push(this.current);
    this.current = [];
    if (joiner !== undefined) this.joiners.push(joiner);
    return true;
  }

  /** At `>`: accept `>`/`>>`/`>&` followed by /dev/null or an fd duplicate; consume it. */
  private redirect(): boolean {
    const s = this.src;
    this.i++; // the first '>'
    if (s[this.i] === ">") this.i++;
    let target = "";
    if (s[this.i] === "&") {
      target = "&";
      this.i++;
    }
    while (s[this.i] === " " || s[this.i] === "\t") this.i++;
    while (this.i < s.length && !" \t\n;|&<>()`'\"$\\".includes(s[this.i]!)) target += s[this.i++];
    return SAFE_REDIRECT_TARGETS.has(target);
  }

  private doubleQuoted(): boolean {
    const s = this.src;
    let text = "";
    this.i++;
    while (this.i < s.length) {
      const c = s[this.i]!;
      if (c === '"') {
        this.append(text);
        this.i++;
        return true;
      }
      if (c === "`") return false;
      if (c === "\\" && this.i + 1 < s.length) {
        text += s[this.i + 1];
        this.i += 2;
        continue;
      }
      if (c === "$") {
        const name = this.variableAt(this.i);
        if (name === undefined) return false;
        text += s.slice(this.i, this.i + name);
        this.i += name;
        continue;
      }
      text += c;
      this.i++;
    }
    return false; // unterminated
  }

  private dollar(): boolean {
    const length = this.variableAt(this.i);
    if (length === undefined) return false;
    this.append(this.src.slice(this.i, this.i + length));
    this.i += length;
    return true;
  }

  /** Length of a plain `$NAME`, `${NAME}` or special `$?`-style reference at `at`; undefined otherwise. */
  private variableAt(at: number): number | undefined {
    const rest = this.src.slice(at);
    const match = /^\$(?:[A-Za-z_][A-Za-z0-9_]*|\{[A-Za-z_][A-Za-z0-9_]*\}|[0-9?#@*!$-])/.exec(rest);
    if (match) return match[0].length;
    // A lone `$` before a space or the end is a literal dollar sign.
    return rest.length === 1 || rest[1] === " " || rest[1] === "\t" ? 1 : undefined;
  }
}

/** Split a command line into simple commands, or undefined if it uses anything unsafe. */
export function parseCommandLine(command: string): ParsedCommandLine | undefined {
  const lexer = new Lexer(command);
  if (!lexer.run() || lexer.commands.length === 0) return undefined;
  return { commands: lexer.commands, joiners: lexer.joiners };
}
