/**
 * The programs the read-only grant may run unasked, each with the options it may take
 * (see option-spec.ts). Only options that read and print are listed; every option that writes a
 * file (sort -o, tree -o, file -C), follows forever (tail -f), runs another program (rg --pre,
 * rg -z, diff -l) or changes anything is absent or denied. Programs that write or execute by
 * design or by one option (uniq, xxd, date, sed, awk, xargs, env, less…) are not here at all.
 * test takes any argument but the variable lookups whose subscripts bash evaluates (isReadOnlyTest).
 * Listing and search programs are in readonly-listing-programs.ts; find and git have their own
 * checkers (readonly-find.ts, readonly-git.ts).
 */
import type { OptionSpec } from "./option-spec.js";
import { LISTING_PROGRAMS } from "./readonly-listing-programs.js";

const CHECKSUM: OptionSpec = {
  flags: "bctwz",
  long: ["binary", "check", "tag", "text", "zero", "ignore-missing", "quiet", "status", "strict", "warn"],
};

/** Programs whose arguments are all data: echo prints them, true/false ignore them. */
export const ANY_ARGUMENTS: ReadonlySet<string> = new Set(["echo", "true", "false"]);

/**
 * Bash's test: its arguments are data except the variable name `-v NAME` looks up. For
 * `a[SUBSCRIPT]` bash evaluates the subscript as arithmetic, which runs any `$(...)` in it even
 * from a single-quoted word (`test -v 'a[$(rm x)]'`). So neither -v nor the other variable lookup,
 * -R, may appear anywhere (`!`, `(`, `-a` and `-o` put them in any position), and no argument may
 * hold a `[`. Every other test operator only compares strings, checks files, or reads integers as
 * plain numbers (`-eq` and friends do not evaluate, unlike in `[[ ]]`).
 */
export function isReadOnlyTest(args: readonly string[]): boolean {
  return args.every((arg) => arg !== "-v" && arg !== "-R" && !arg.includes("["));
}

/** Read-only programs and their accepted options (find and git are checked separately). */
export const READ_ONLY_PROGRAMS: ReadonlyMap<string, OptionSpec> = new Map<string, OptionSpec>([
  ...LISTING_PROGRAMS,
  ["pwd", { flags: "LP" }],
  // Bash's printf: any option (-v NAME assigns a variable) is refused; the format comes first.
  ["printf", { abbreviations: false, stopAtOperand: true }],
  ["cd", { flags: "LP", check: (parsed) => parsed.operands.length <= 1 }],
  ["which", { flags: "as", abbreviations: false }],
  ["whoami", {}],
  ["id", { flags: "gGnruzZa", long: ["group", "groups", "name", "real", "user", "zero", "context"] }],
  [
    "uname",
    {
      flags: "asnrvmpio",
      long: [
        "all",
        "kernel-name",
        "nodename",
        "kernel-release",
        "kernel-version",
        "machine",
        "processor",
        "hardware-platform",
        "operating-system",
      ],
    },
  ],
  ["basename", { flags: "az", valued: "s", long: ["multiple", "zero"], longValued: ["suffix"] }],
  ["dirname", { flags: "z", long: ["zero"] }],
  [
    "realpath",
    {
      flags: "eLmPqsz",
      long: [
        "canonicalize-existing",
        "canonicalize-missing",
        "logical",
        "physical",
        "quiet",
        "strip",
        "no-symlinks",
        "zero",
      ],
      longValued: ["relative-to", "relative-base"],
    },
  ],
  [
    "readlink",
    {
      flags: "femnqsvz",
      long: [
        "canonicalize",
        "canonicalize-existing",
        "canonicalize-missing",
        "no-newline",
        "quiet",
        "silent",
        "verbose",
        "zero",
      ],
    },
  ],
  [
    "sort",
    {
      flags: "bdfgiMhnRrVcCmsuz",
      valued: "kSt",
      long: [
        "ignore-leading-blanks",
        "dictionary-order",
        "ignore-case",
        "general-numeric-sort",
        "ignore-nonprinting",
        "month-sort",
        "human-numeric-sort",
        "numeric-sort",
        "random-sort",
        "reverse",
        "version-sort",
        "merge",
        "stable",
        "unique",
        "zero-terminated",
        "debug",
      ],
      longValued: [
        "key",
        "buffer-size",
        "field-separator",
        "parallel",
        "sort",
        "random-source",
        "files0-from",
        "batch-size",
      ],
      longOptional: ["check"],
      denied: ["output", "compress-program", "temporary-directory"],
    },
  ],
  [
    "cut",
    {
      flags: "nsz",
      valued: "bcdf",
      long: ["only-delimited", "zero-terminated", "complement"],
      longValued: ["bytes", "characters", "delimiter", "fields", "output-delimiter"],
    },
  ],
  ["tr", { flags: "cCdst", long: ["complement", "delete", "squeeze-repeats", "truncate-set1"] }],
  [
    "diff",
    {
      flags: "abBdeEiNpPqrsStTuwyZcn",
      valued: "CUDFIxXSW",
      long: [
        "brief",
        "report-identical-files",
        "ignore-case",
        "ignore-tab-expansion",
        "ignore-trailing-space",
        "ignore-space-change",
        "ignore-all-space",
        "ignore-blank-lines",
        "text",
        "strip-trailing-cr",
        "recursive",
        "new-file",
        "unidirectional-new-file",
        "minimal",
        "speed-large-files",
        "expand-tabs",
        "initial-tab",
        "suppress-common-lines",
        "side-by-side",
        "left-column",
        "suppress-blank-empty",
        "no-dereference",
        "show-c-function",
        "ed",
        "normal",
        "rcs",
      ],
      longValued: [
        "ignore-matching-lines",
        "show-function-line",
        "label",
        "width",
        "tabsize",
        "from-file",
        "to-file",
        "exclude",
        "exclude-from",
        "starting-file",
        "ifdef",
        "line-format",
        "horizon-lines",
        "palette",
      ],
      longOptional: ["context", "unified", "color"],
      denied: ["paginate"],
    },
  ],
  [
    "cmp",
    {
      flags: "bls",
      valued: "in",
      long: ["print-bytes", "verbose", "quiet", "silent"],
      longValued: ["ignore-initial", "bytes"],
    },
  ],
  [
    "comm",
    {
      flags: "123z",
      long: ["check-order", "nocheck-order", "zero-terminated", "total"],
      longValued: ["output-delimiter"],
    },
  ],
  [
    "nl",
    {
      flags: "p",
      valued: "bdfhilnsvw",
      long: ["no-renumber"],
      longValued: [
        "body-numbering",
        "section-delimiter",
        "footer-numbering",
        "header-numbering",
        "line-increment",
        "join-blank-lines",
        "number-format",
        "number-separator",
        "starting-line-number",
        "number-width",
      ],
    },
  ],
  ["tac", { flags: "br", valued: "s", long: ["before", "regex"], longValued: ["separator"] }],
  ["rev", { abbreviations: false }],
  ["fold", { flags: "bs", valued: "w", long: ["bytes", "spaces"], longValued: ["width"] }],
  [
    "column",
    {
      flags: "txneJL",
      valued: "scoNRHOTWE",
      long: ["table", "fillrows", "json", "keep-empty-lines"],
      longValued: [
        "separator",
        "output-separator",
        "output-width",
        "table-columns",
        "table-right",
        "table-hide",
        "table-order",
        "table-truncate",
        "table-wrap",
        "table-noextreme",
        "table-name",
      ],
    },
  ],
  [
    "jq",
    {
      flags: "nrjascCMSeR0",
      valued: "fL",
      abbreviations: false,
      long: [
        "null-input",
        "raw-input",
        "slurp",
        "compact-output",
        "raw-output",
        "raw-output0",
        "join-output",
        "ascii-output",
        "sort-keys",
        "color-output",
        "monochrome-output",
        "tab",
        "stream",
        "stream-errors",
        "seq",
        "exit-status",
        "args",
        "jsonargs",
        "unbuffered",
      ],
      longValued: ["indent", "from-file"],
      longTwoValues: ["arg", "argjson", "slurpfile", "rawfile"],
    },
  ],
  ["printenv", { flags: "0", long: ["null"] }],
  [
    "seq",
    { flags: "w", valued: "fs", numeric: true, long: ["equal-width"], longValued: ["format", "separator"] },
  ],
  ["sha256sum", CHECKSUM],
  ["sha1sum", CHECKSUM],
  ["sha512sum", CHECKSUM],
  ["md5sum", CHECKSUM],
  ["b2sum", CHECKSUM],
  ["cksum", { flags: "", long: ["raw", "tag", "untagged", "base64"], longValued: ["algorithm", "length"] }],
  [
    "od",
    {
      flags: "bcdfiloxsv",
      valued: "AjNtSw",
      long: ["output-duplicates", "traditional"],
      longValued: ["address-radix", "skip-bytes", "read-bytes", "format", "strings", "width", "endian"],
    },
  ],
  ["hexdump", { flags: "bcCdovx", valued: "enfsL", abbreviations: false }],
  [
    "strings",
    {
      flags: "afwd",
      valued: "ntTeos",
      numeric: true,
      long: ["all", "data", "print-file-name", "include-all-whitespace"],
      longValued: ["bytes", "radix", "encoding", "target", "output-separator"],
    },
  ],
]);
