/**
 * A POSIX-shell lexer for the safety checks on shell commands (hard denies, read-only commands,
 * downloads and running them): the words bash would see after quote removal.
 *
 * It splits a command line into simple commands (at `;`, `&&`, `||`, `|`, `&`, newlines and
 * parentheses), removes quotes and backslashes the way bash does (`r''m` is `rm`, `$'\x72m'` is
 * `rm`), separates redirections, and lexes the commands inside `$(…)`, backticks and `<(…)` as
 * commands of their own so a hard deny sees them too. It expands nothing: a word that bash
 * would expand (unquoted `{ } * ? [ ~`, any `$` expansion) is marked not literal (a `~` only
 * where bash expands it: at a word's start or after `=` / `:`), and anything
 * beyond plain simple commands (substitutions, subshells, background jobs, here-documents,
 * unterminated quotes) marks the whole line not plain. Callers decide what that means.
 */

/** One word after quote removal. */
export interface ShellWord {
  readonly text: string;
  /** False when bash would expand it: unquoted `{ } * ? [ ~` or a `$` expansion anywhere. */
  readonly literal: boolean;
}

/** A redirection: its operator (with any fd prefix, e.g. "2>", ">>", "<", ">&") and its target. */
export interface ShellRedirect {
  readonly op: string;
  readonly target: ShellWord;
}

/** One simple command. */
export interface ShellCommand {
  readonly words: readonly ShellWord[];
  readonly redirects: readonly ShellRedirect[];
}

/** How two top-level simple commands are joined. */
export type Joiner = ";" | "&&" | "||" | "|" | "&";

/** A lexed command line. */
export interface LexedLine {
  /** Every simple command, those inside substitutions included. */
  readonly commands: readonly ShellCommand[];
  /** Between consecutive commands; meaningful only when `plain`. */
  readonly joiners: readonly Joiner[];
  /** Only simple commands joined by `;`, `&&`, `||`, `|`: no substitution, subshell, `&`, heredoc. */
  readonly plain: boolean;
}

const EXPANDING = new Set(["{", "}", "*", "?", "[", "]", "~"]);

const ANSI_ESCAPES: Readonly<Record<string, string>> = {
  n: "\n",
  t: "\t",
  r: "\r",
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "?": "?",
};

/**
 * How deep substitutions are read as nested command lines. Deeper ones (only a hostile or broken
 * command nests 32 `$(`) are read as subshells of the line they sit in: their commands are still
 * found, with no recursion, so twenty thousand `$(` cannot overflow the stack.
 */
const MAX_NESTING = 32;

class Lexer {
  private i: number;
  private text: string | undefined;
  private literal = true;
  private words: ShellWord[] = [];
  private redirects: ShellRedirect[] = [];
  private pendingRedirect: string | undefined;
  readonly commands: ShellCommand[] = [];
  readonly joiners: Joiner[] = [];
  plain = true;
  /** Open parentheses inside a substitution, so its closer is the matching one. */
  private depth = 0;

  constructor(
    private readonly src: string,
    start: number,
    private readonly closer: string | undefined,
    private readonly nesting: number,
  ) {
    this.i = start;
  }

  /** Lex until the end (or the unmatched closer); returns the index after it. */
  run(): number {
    const s = this.src;
    while (this.i < s.length) {
      const c = s[this.i] as string;
      if (this.closer !== undefined && c === this.closer && this.depth === 0) {
        this.endCommand(undefined);
        return this.i + 1;
      }
      if (c === " " || c === "\t") {
        this.endWord();
        this.i++;
      } else if (c === "\n" || c === ";") {
        this.endCommand(";");
        this.i += s[this.i + 1] === ";" ? 2 : 1;
      } else if (c === "|") this.pipe();
      else if (c === "&") this.ampersand();
      else if (c === ">" || c === "<") this.redirect();
      else if (c === "(" || c === ")") {
        this.depth = Math.max(0, this.depth + (c === "(" ? 1 : -1));
        this.plain = false;
        this.endCommand(";");
        this.i++;
      } else if (c === "`") this.backtick();
      else if (c === "'") this.singleQuoted();
      else if (c === '"') this.doubleQuoted();
      else if (c === "\\") {
        if (s[this.i + 1] !== "\n") this.append(s[this.i + 1] ?? "");
        this.i += 2;
      } else if (c === "$") this.dollar(false);
      else if (c === "#" && this.text === undefined) {
        const end = s.indexOf("\n", this.i);
        this.i = end === -1 ? s.length : end;
      } else {
        if (EXPANDING.has(c) && (c !== "~" || this.tildeExpands())) this.literal = false;
        this.append(c);
        this.i++;
      }
    }
    if (this.closer !== undefined) this.plain = false; // unterminated substitution
    this.endCommand(undefined);
    return this.i;
  }

  /** bash expands an unquoted `~` at the start of a word and after `=` or `:` (`--dir=~/x`). */
  private tildeExpands(): boolean {
    return this.text === undefined || this.text === "" || /[=:]$/.test(this.text);
  }

  private append(text: string): void {
    this.text = (this.text ?? "") + text;
  }

  private takeWord(): ShellWord | undefined {
    if (this.text === undefined) return undefined;
    const word = { text: this.text, literal: this.literal };
    this.text = undefined;
    this.literal = true;
    return word;
  }

  private endWord(): void {
    const word = this.takeWord();
    if (word === undefined) return;
    if (this.pendingRedirect !== undefined) {
      this.redirects.push({ op: this.pendingRedirect, target: word });
      this.pendingRedirect = undefined;
    } else this.words.push(word);
  }

  private endCommand(joiner: Joiner | undefined): void {
    this.endWord();
    if (this.pendingRedirect !== undefined) this.plain = false; // redirection without a target
    this.pendingRedirect = undefined;
    if (this.words.length === 0 && this.redirects.length === 0) {
      // `a && || b`, a leading `|`, a trailing `|`: not something we vouch for. A trailing `;` is fine.
      if (joiner !== undefined && joiner !== ";") this.plain = false;
      const last = this.joiners.at(-1);
      if (joiner === undefined && last !== undefined && last !== ";" && last !== "&") this.plain = false;
      return;
    }
    this.commands.push({ words: this.words, redirects: this.redirects });
    this.words = [];
    this.redirects = [];
    if (joiner !== undefined) this.joiners.push(joiner);
  }

  private pipe(): void {
    const next = this.src[this.i + 1];
    if (next === "|") {
      this.endCommand("||");
      this.i += 2;
    } else {
      if (next === "&") this.plain = false; // |& pipes stderr too
      this.endCommand("|");
      this.i += next === "&" ? 2 : 1;
    }
  }

  private ampersand(): void {
    const next = this.src[this.i + 1];
    if (next === "&") {
      this.endCommand("&&");
      this.i += 2;
    } else if (next === ">") {
      this.endWord();
      this.i += 1;
      this.redirect("&");
    } else {
      this.plain = false; // background job
      this.endCommand("&");
      this.i += 1;
    }
  }

  /** At `>` or `<` (after an optional `&` prefix): record the operator; the next word is its target. */
  private redirect(prefix = ""): void {
    const s = this.src;
    let fd = "";
    if (prefix === "" && this.text !== undefined && /^\d+$/.test(this.text) && this.literal) {
      fd = this.text;
      this.text = undefined;
    } else this.endWord();
    const start = this.i;
    if ((s[this.i] === "<" || s[this.i] === ">") && s[this.i + 1] === "(") {
      this.plain = false; // process substitution
      this.nested(this.i + 1, this.i + 2);
      return;
    }
    if (s.startsWith("<<", this.i)) this.plain = false; // here-document or here-string
    this.i++;
    while (this.i < s.length && ">|&-<".includes(s[this.i] as string) && this.i - start < 3) this.i++;
    this.pendingRedirect = prefix + fd + s.slice(start, this.i);
    while (s[this.i] === " " || s[this.i] === "\t") this.i++;
  }

  private singleQuoted(): void {
    const end = this.src.indexOf("'", this.i + 1);
    if (end < 0) {
      this.plain = false;
      this.append(this.src.slice(this.i + 1));
      this.i = this.src.length;
      return;
    }
    this.append(this.src.slice(this.i + 1, end));
    this.i = end + 1;
  }

  private doubleQuoted(): void {
    const s = this.src;
    this.append("");
    this.i++;
    while (this.i < s.length) {
      const c = s[this.i] as string;
      if (c === '"') {
        this.i++;
        return;
      }
      if (c === "\\" && '$`"\\\n'.includes(s[this.i + 1] ?? "")) {
        if (s[this.i + 1] !== "\n") this.append(s[this.i + 1] as string);
        this.i += 2;
      } else if (c === "$") this.dollar(true);
      else if (c === "`") this.backtick();
      else {
        this.append(c);
        this.i++;
      }
    }
    this.plain = false; // unterminated
  }

  /**
   * Lex a nested command line (substitution) from `start` to its `)` into this line's commands; past
   * MAX_NESTING, go on from its first parenthesis `open` in this lexer, as a subshell.
   */
  private nested(open: number, start: number): void {
    if (this.nesting >= MAX_NESTING) {
      this.literal = false;
      this.i = open;
      return;
    }
    const inner = new Lexer(this.src, start, ")", this.nesting + 1);
    this.i = inner.run();
    for (const command of inner.commands) this.commands.push(command);
    this.literal = false;
  }

  private backtick(): void {
    this.plain = false;
    if (this.nesting >= MAX_NESTING) {
      // Read on in this lexer, the backtick as a command boundary (see MAX_NESTING).
      this.literal = false;
      this.endCommand(";");
      this.i++;
      return;
    }
    let end = this.i + 1;
    while (end < this.src.length && this.src[end] !== "`") end += this.src[end] === "\\" ? 2 : 1;
    const inner = new Lexer(this.src.slice(this.i + 1, end), 0, undefined, this.nesting + 1);
    inner.run();
    for (const command of inner.commands) this.commands.push(command);
    this.literal = false;
    this.append("");
    this.i = end + 1;
  }

  /** At `$`: an expansion (not literal), `$'…'` ANSI-C quoting, or a lone dollar sign. */
  private dollar(inDoubleQuotes: boolean): void {
    const s = this.src;
    const next = s[this.i + 1] ?? "";
    if (next === "(") {
      this.plain = false;
      this.append("");
      this.nested(this.i + 1, this.i + (s[this.i + 2] === "(" ? 3 : 2));
      return;
    }
    if (next === "'" && !inDoubleQuotes) {
      this.literal = false;
      this.ansiQuoted();
      return;
    }
    if (next === '"' && !inDoubleQuotes) {
      this.literal = false;
      this.i++;
      return;
    }
    const match = /^\$(?:\{[^}]*\}?|[A-Za-z_][A-Za-z0-9_]*|[0-9?#@*!$-])/.exec(s.slice(this.i));
    if (match === null) {
      this.append("$"); // a lone dollar sign is literal
      this.i++;
      return;
    }
    this.literal = false;
    this.append(match[0]);
    this.i += match[0].length;
  }

  private ansiQuoted(): void {
    const s = this.src;
    this.i += 2;
    let out = "";
    while (this.i < s.length && s[this.i] !== "'") {
      const c = s[this.i] as string;
      if (c !== "\\") {
        out += c;
        this.i++;
        continue;
      }
      const rest = s.slice(this.i + 1);
      const hex = /^x([0-9a-fA-F]{1,2})/.exec(rest) ?? /^u([0-9a-fA-F]{1,4})/.exec(rest);
      const octal = /^([0-7]{1,3})/.exec(rest);
      if (hex) {
        out += String.fromCodePoint(Number.parseInt(hex[1] as string, 16));
        this.i += 1 + hex[0].length;
      } else if (octal) {
        out += String.fromCharCode(Number.parseInt(octal[1] as string, 8));
        this.i += 1 + octal[0].length;
      } else {
        out += ANSI_ESCAPES[rest[0] ?? ""] ?? `\\${rest[0] ?? ""}`;
        this.i += 2;
      }
    }
    if (this.i >= s.length) this.plain = false;
    this.append(out);
    this.i++;
  }
}

/** Lex a command line (never throws; see LexedLine for what it reports). */
export function lexCommandLine(command: string): LexedLine {
  const lexer = new Lexer(command, 0, undefined, 0);
  lexer.run();
  return { commands: lexer.commands, joiners: lexer.joiners, plain: lexer.plain };
}

/** A word quoted for bash so it reads back as exactly `text` (single quotes unless plainly safe). */
export function quoteWord(text: string): string {
  if (/^[A-Za-z0-9_\-+=.,/:@%^]+$/.test(text)) return text;
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
