/**
 * Argument allow-lists for the read-only classifier: a program's accepted options, parsed the way
 * getopt_long and git's parse-options do — short clusters (`-la`), attached values (`-n5`,
 * `-oFILE` is the letter o with value FILE), `--name=value` and `--name value`, and unique
 * prefixes of long options (`--out` is `--output`). Options the real program has but that write,
 * execute or page are listed as denied so a prefix can never slip past them; anything not listed
 * at all is refused. The answer is only ever "every word is accounted for" or "no".
 */

/** What a program accepts. Letters are short options; names are long options without `--`. */
export interface OptionSpec {
  /** Short options without a value. */
  readonly flags?: string;
  /** Short options with a required value (attached or the next word). */
  readonly valued?: string;
  /** Short options with an optional value, which must be attached (`-uno`). */
  readonly optional?: string;
  /** `-5` style numeric options (head -5, grep -3, git log -3). */
  readonly numeric?: boolean;
  readonly long?: readonly string[];
  /** Long options with a required value. */
  readonly longValued?: readonly string[];
  /** Long options with an optional value, given only as `--name=value`. */
  readonly longOptional?: readonly string[];
  /** Long options with two values (jq --arg NAME VALUE). */
  readonly longTwoValues?: readonly string[];
  /** Long options the program has that must never be accepted (they resolve prefixes too). */
  readonly denied?: readonly string[];
  /** Whether the program accepts unique prefixes of long options (default true: getopt_long). */
  readonly abbreviations?: boolean;
  /** Whether option parsing stops at the first operand (printf); default false (GNU permutes). */
  readonly stopAtOperand?: boolean;
  /** A last look at the parsed result (e.g. "listing forms take no operands"). */
  readonly check?: (parsed: ParsedArgs) => boolean;
}

/** One accepted option by its canonical name (a letter or a long name). */
export interface ParsedOption {
  readonly name: string;
  readonly value?: string;
}

export interface ParsedArgs {
  readonly options: readonly ParsedOption[];
  readonly operands: readonly string[];
}

type LongKind = "flag" | "valued" | "optional" | "two" | "denied";

function longKinds(spec: OptionSpec): Map<string, LongKind> {
  const kinds = new Map<string, LongKind>();
  for (const name of spec.long ?? []) kinds.set(name, "flag");
  for (const name of spec.longValued ?? []) kinds.set(name, "valued");
  for (const name of spec.longOptional ?? []) kinds.set(name, "optional");
  for (const name of spec.longTwoValues ?? []) kinds.set(name, "two");
  for (const name of spec.denied ?? []) kinds.set(name, "denied");
  return kinds;
}

/** The long option `written` names: exact, else (when allowed) its unique prefix match. */
function resolveLong(written: string, kinds: ReadonlyMap<string, LongKind>, abbreviations: boolean) {
  if (kinds.has(written)) return written;
  if (!abbreviations || written === "") return undefined;
  const matches = [...kinds.keys()].filter((name) => name.startsWith(written));
  return matches.length === 1 ? matches[0] : undefined;
}

/** Parse `args` against `spec`; undefined when any word is not accounted for. */
export function parseArgs(spec: OptionSpec, args: readonly string[]): ParsedArgs | undefined {
  const kinds = longKinds(spec);
  const options: ParsedOption[] = [];
  const operands: string[] = [];
  let onlyOperands = false;
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] as string;
    if (onlyOperands || arg === "-" || !arg.startsWith("-")) {
      operands.push(arg);
      if (spec.stopAtOperand) onlyOperands = true;
      continue;
    }
    if (arg === "--") {
      onlyOperands = true;
      continue;
    }
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const written = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      const name = resolveLong(written, kinds, spec.abbreviations ?? true);
      const kind = name === undefined ? undefined : kinds.get(name);
      if (name === undefined || kind === undefined || kind === "denied") return undefined;
      const attached = eq === -1 ? undefined : arg.slice(eq + 1);
      if (kind === "flag") {
        if (attached !== undefined) return undefined;
        options.push({ name });
      } else if (kind === "optional") {
        options.push(attached === undefined ? { name } : { name, value: attached });
      } else if (kind === "valued") {
        const value = attached ?? args[++i];
        if (value === undefined) return undefined;
        options.push({ name, value });
      } else {
        if (attached !== undefined || i + 2 >= args.length) return undefined;
        options.push({ name, value: `${args[i + 1]}\u0000${args[i + 2]}` });
        i += 2;
      }
      continue;
    }
    const cluster = parseCluster(spec, arg, args[i + 1]);
    if (cluster === undefined) return undefined;
    options.push(...cluster.options);
    if (cluster.tookNext) i += 1;
  }
  const parsed = { options, operands };
  return spec.check === undefined || spec.check(parsed) ? parsed : undefined;
}

/** A short-option cluster such as `-la`, `-n5`, `-C2`, `-uno` or `-5`. */
function parseCluster(
  spec: OptionSpec,
  arg: string,
  next: string | undefined,
): { options: ParsedOption[]; tookNext: boolean } | undefined {
  const options: ParsedOption[] = [];
  if (spec.numeric && /^-\d+$/.test(arg))
    return { options: [{ name: "#", value: arg.slice(1) }], tookNext: false };
  for (let j = 1; j < arg.length; j += 1) {
    const letter = arg[j] as string;
    const rest = arg.slice(j + 1);
    if (spec.flags?.includes(letter)) options.push({ name: letter });
    else if (spec.valued?.includes(letter)) {
      if (rest !== "") return { options: [...options, { name: letter, value: rest }], tookNext: false };
      if (next === undefined) return undefined;
      return { options: [...options, { name: letter, value: next }], tookNext: true };
    } else if (spec.optional?.includes(letter)) {
      return {
        options: [...options, rest === "" ? { name: letter } : { name: letter, value: rest }],
        tookNext: false,
      };
    } else return undefined;
  }
  return { options, tookNext: false };
}

/** Whether the parsed options include one of `names`. */
export function hasOption(parsed: ParsedArgs, ...names: string[]): boolean {
  return parsed.options.some((option) => names.includes(option.name));
}
