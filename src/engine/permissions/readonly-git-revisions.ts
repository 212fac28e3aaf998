/**
 * The options of git's revision walk and diff output that the read-only grant accepts — what
 * log, show and diff share — and the options git is refused in every subcommand (they write a
 * file, run configured programs, verify signatures with gpg or open a pager). Options whose value
 * git takes only attached are listed as optional ones, so the next word is never read as their
 * value (it is an option or operand of its own to git).
 */
import type { OptionSpec } from "./option-spec.js";

/** Options git refuses from us in every subcommand: they write, run drivers or verify with gpg. */
export const DENIED = ["output", "ext-diff", "textconv", "show-signature", "open-files-in-pager", "exec"];

const REVISION_LONG = [
  "oneline",
  "stat",
  "shortstat",
  "numstat",
  "name-only",
  "name-status",
  "summary",
  "patch",
  "no-patch",
  "raw",
  "graph",
  "all",
  "reverse",
  "first-parent",
  "merges",
  "no-merges",
  "follow",
  "full-history",
  "abbrev-commit",
  "no-abbrev-commit",
  "relative-date",
  "topo-order",
  "date-order",
  "author-date-order",
  "no-color",
  "cached",
  "staged",
  "merge-base",
  "ignore-all-space",
  "ignore-space-change",
  "ignore-blank-lines",
  "ignore-space-at-eol",
  "exit-code",
  "quiet",
  "check",
  "full-index",
  "binary",
  "minimal",
  "patience",
  "histogram",
  "function-context",
  "no-prefix",
  "cumulative",
  "compact-summary",
  "no-renames",
  "no-ext-diff",
  "no-textconv",
  "text",
  "left-right",
  "cherry-pick",
  "cherry-mark",
  "boundary",
  "simplify-by-decoration",
  "ancestry-path",
  "no-decorate",
  "source",
  "use-mailmap",
  "no-index",
];
const REVISION_VALUED = [
  "date",
  "format",
  "author",
  "committer",
  "grep",
  "since",
  "until",
  "after",
  "before",
  "max-count",
  "skip",
  "word-diff-regex",
  "diff-filter",
  "src-prefix",
  "dst-prefix",
  "stat-width",
  "stat-count",
  "inter-hunk-context",
  "min-parents",
  "max-parents",
];
/**
 * Options whose value git takes only when attached (`--unified=5`): the next word is an option or
 * operand of its own — read as a value, `git log --unified --output=x` would have hidden a write.
 */
const REVISION_OPTIONAL = [
  "unified",
  "decorate",
  "branches",
  "tags",
  "remotes",
  "abbrev",
  "pretty",
  "color",
  "word-diff",
  "color-words",
  "find-renames",
  "find-copies",
  "relative",
  "dirstat",
  "notes",
];

export const REVISIONS: OptionSpec = {
  flags: "pusqzMCBDRabwWiEFP",
  valued: "nSGLO",
  // -U<n>: its value only attached (git's PARSE_OPT_OPTARG), as for --unified above.
  optional: "U",
  numeric: true,
  long: REVISION_LONG,
  longValued: REVISION_VALUED,
  longOptional: REVISION_OPTIONAL,
  denied: DENIED,
};
