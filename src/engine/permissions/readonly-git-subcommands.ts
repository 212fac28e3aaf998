/**
 * The git subcommands the read-only grant accepts and the options each may take: listing and
 * inspecting only (status, log, show, diff, blame, grep, ls-files, branch and tag listings…).
 * Options that write a file (--output), run configured programs (--ext-diff, --textconv), verify
 * signatures with gpg (--show-signature) or open a pager (grep -O) are denied everywhere
 * (readonly-git-revisions.ts, with the revision and diff options log, show and diff share), and
 * branch/tag take names only in their listing forms. `diff` says which of --no-ext-diff and
 * --no-textconv readonly-git.ts adds when the subcommand runs.
 */
import { hasOption, type OptionSpec, type ParsedArgs } from "./option-spec.js";
import { DENIED, REVISIONS } from "./readonly-git-revisions.js";

const onlyWhenListing =
  (...listFlags: string[]) =>
  (parsed: ParsedArgs) =>
    parsed.operands.length === 0 || hasOption(parsed, ...listFlags);

/** Read-only subcommands, their options, and whether they get the diff switches. */
export interface Subcommand {
  readonly spec: OptionSpec;
  readonly diff: "both" | "textconv" | "none";
}

export const SUBCOMMANDS: ReadonlyMap<string, Subcommand> = new Map<string, Subcommand>([
  [
    "status",
    {
      spec: {
        flags: "sbz",
        optional: "u",
        long: [
          "short",
          "branch",
          "long",
          "ahead-behind",
          "no-ahead-behind",
          "renames",
          "no-renames",
          "show-stash",
          "null",
          "no-column",
        ],
        longOptional: [
          "porcelain",
          "untracked-files",
          "ignored",
          "ignore-submodules",
          "column",
          "find-renames",
        ],
        denied: DENIED,
      },
      diff: "none",
    },
  ],
  ["log", { spec: REVISIONS, diff: "both" }],
  ["show", { spec: REVISIONS, diff: "both" }],
  ["diff", { spec: REVISIONS, diff: "both" }],
  [
    "shortlog",
    {
      spec: {
        flags: "nsec",
        long: ["numbered", "summary", "email", "committer", "all", "no-merges", "merges"],
        longValued: ["format", "group", "since", "until"],
        denied: DENIED,
      },
      diff: "none",
    },
  ],
  [
    "blame",
    {
      spec: {
        flags: "bclnpstwef",
        valued: "L",
        long: [
          "porcelain",
          "line-porcelain",
          "incremental",
          "show-name",
          "show-number",
          "show-email",
          "root",
          "first-parent",
          "no-textconv",
        ],
        longValued: ["date"],
        longOptional: ["abbrev"],
        denied: DENIED,
      },
      diff: "textconv",
    },
  ],
  [
    "describe",
    {
      spec: {
        long: ["all", "tags", "contains", "debug", "long", "always", "first-parent", "exact-match"],
        longValued: ["candidates", "match", "exclude"],
        longOptional: ["abbrev", "dirty", "broken"],
        denied: DENIED,
      },
      diff: "none",
    },
  ],
  [
    "rev-parse",
    {
      spec: {
        flags: "q",
        long: [
          "verify",
          "symbolic",
          "symbolic-full-name",
          "show-toplevel",
          "show-prefix",
          "show-cdup",
          "git-dir",
          "git-common-dir",
          "absolute-git-dir",
          "is-inside-work-tree",
          "is-inside-git-dir",
          "is-bare-repository",
          "is-shallow-repository",
          "all",
          "quiet",
        ],
        longOptional: ["short", "abbrev-ref", "branches", "tags", "remotes"],
        denied: DENIED,
      },
      diff: "none",
    },
  ],
  [
    "ls-files",
    {
      spec: {
        flags: "cdmoiskutvfz",
        valued: "xX",
        long: [
          "cached",
          "deleted",
          "modified",
          "others",
          "ignored",
          "stage",
          "killed",
          "unmerged",
          "directory",
          "no-empty-directory",
          "exclude-standard",
          "full-name",
          "error-unmatch",
          "eol",
          "deduplicate",
          "recurse-submodules",
          "debug",
        ],
        longValued: ["format", "exclude", "exclude-from", "exclude-per-directory", "with-tree"],
        longOptional: ["abbrev"],
        denied: DENIED,
      },
      diff: "none",
    },
  ],
  [
    "ls-tree",
    {
      spec: {
        flags: "drtlz",
        long: ["long", "name-only", "name-status", "object-only", "full-name", "full-tree"],
        longValued: ["format"],
        longOptional: ["abbrev"],
        denied: DENIED,
      },
      diff: "none",
    },
  ],
  [
    "grep",
    {
      spec: {
        flags: "iIvwcElLhHnzqoaFPG",
        valued: "efABCm",
        numeric: true,
        long: [
          "cached",
          "untracked",
          "no-index",
          "no-exclude-standard",
          "exclude-standard",
          "recurse-submodules",
          "text",
          "ignore-case",
          "word-regexp",
          "invert-match",
          "full-name",
          "extended-regexp",
          "basic-regexp",
          "perl-regexp",
          "fixed-strings",
          "line-number",
          "column",
          "files-with-matches",
          "name-only",
          "files-without-match",
          "count",
          "null",
          "break",
          "heading",
          "show-function",
          "function-context",
          "only-matching",
          "quiet",
          "all-match",
          "and",
          "or",
          "not",
          "no-color",
          "no-textconv",
        ],
        longValued: ["max-depth", "threads", "context", "after-context", "before-context", "max-count"],
        longOptional: ["color"],
        denied: DENIED,
      },
      diff: "textconv",
    },
  ],
  [
    "branch",
    {
      spec: {
        flags: "alrv",
        long: [
          "list",
          "all",
          "remotes",
          "verbose",
          "show-current",
          "no-abbrev",
          "ignore-case",
          "no-color",
          "no-column",
        ],
        longValued: ["contains", "no-contains", "points-at", "sort", "format"],
        longOptional: ["merged", "no-merged", "color", "column", "abbrev"],
        denied: [
          ...DENIED,
          "delete",
          "move",
          "copy",
          "force",
          "set-upstream-to",
          "unset-upstream",
          "edit-description",
          "track",
          "no-track",
          "create-reflog",
        ],
        check: onlyWhenListing("l", "list"),
      },
      diff: "none",
    },
  ],
  [
    "tag",
    {
      spec: {
        flags: "l",
        optional: "n",
        long: ["list", "ignore-case", "no-column"],
        longValued: ["contains", "no-contains", "points-at", "sort", "format"],
        longOptional: ["merged", "no-merged", "color", "column"],
        denied: [...DENIED, "delete", "verify", "annotate", "sign", "force", "message", "file", "edit"],
        check: onlyWhenListing("l", "list"),
      },
      diff: "none",
    },
  ],
  [
    "remote",
    {
      spec: { flags: "v", long: ["verbose"], check: (parsed) => parsed.operands.length === 0 },
      diff: "none",
    },
  ],
]);
