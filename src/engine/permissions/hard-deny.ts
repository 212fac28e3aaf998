/**
 * Hard-deny rules: actions that are never allowed, whatever the mode, grant or approval.
 *
 * Rules are matched against the *target* arguments of a call (command, path, url, cwd, …), never
 * against free content such as the text of a file being written. A shell command is checked on
 * the words the shell lexer produces after quote removal (hard-deny-commands.ts: recursive
 * deletes and permission changes of /, home or system folders, `find / -delete`), and the
 * regular expressions — filesystem creation, raw device writes, fork bombs, power control,
 * credential files, plus configured patterns — see both the text as written and each lexed
 * command's words, so `mk''fs` is `mkfs`. This is a speed bump in front of the sandbox, which is
 * what actually contains a command; keeping file tools inside the workspace is the tools' job.
 */
import { lexedCommandWords, matchCommandRules } from "./hard-deny-commands.js";

export interface HardDenyRule {
  readonly label: string;
  readonly pattern: RegExp;
}

export interface HardDenyMatch {
  readonly rule: string;
  readonly subject: string;
}

/**
 * The built-in rules. Commands are model-written and as long as the model likes, so each pattern
 * is linear: a scan from one start stops where the next start's would begin. `dd` reads on only
 * to the next `dd` (a later `dd … of=` is found from that one); the fork bomb's body stops at any
 * brace, its closing `}` is looked for once, and `\s*(?::\s*)?&` has one way to split spaces.
 * With `[^;&|\n]*` and `[^}]*` every unclosed start read to the end: seconds on 40,000 characters.
 */
const BUILTIN: ReadonlyArray<readonly [label: string, source: string]> = [
  ["filesystem creation (mkfs)", String.raw`\bmkfs(?:\.[a-z0-9]+)?\b`],
  [
    "raw write to a block device",
    String.raw`\bdd\b(?:(?!\bdd\b)[^;&|\n])*\bof=/dev/(?!null\b)|>\s*/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk)`,
  ],
  ["fork bomb", String.raw`:\s*\(\s*\)\s*\{(?=[^{}]*\})[^{}]*:\s*\|\s*(?::\s*)?&`],
  ["power control", String.raw`(?:^|[;&|]\s*|\bsudo\s+)(?:shutdown|reboot|halt|poweroff)\b`],
  ["SSH keys and config", String.raw`(?:^|[\s'"=:/])\.ssh(?:/|$|[\s'"])|\bid_(?:rsa|dsa|ecdsa|ed25519)\b`],
  [
    "environment secrets file (.env)",
    String.raw`(?:^|[\s'"=:/])\.env(?!\.(?:example|sample|template|dist)\b)(?:\.[\w-]+)?(?=$|[\s'";|&)])`,
  ],
  [
    "credential file",
    String.raw`\.aws/credentials\b|\.netrc\b|\.git-credentials\b|\.pgpass\b|\.pypirc\b|\.docker/config\.json\b|\.kube/config\b|\.gnupg\b|/etc/(?:shadow|gshadow|sudoers)\b`,
  ],
];

/** The argument names whose values are targets (what a call acts on), not content. */
const TARGET_KEYS: ReadonlySet<string> = new Set([
  "command",
  "path",
  "paths",
  "file",
  "files",
  "filename",
  "url",
  "cwd",
  "dir",
  "directory",
  "target",
  "destination",
  "source",
  // web_fetch's file to save the body in: a write as much as write_file's path.
  "save_to",
  // save_skill's bundled file copied from the workspace: a read as much as read_file's path.
  "from",
]);

/** Compile the built-in rules plus configured regex sources (throws naming a bad pattern). */
export function compileHardDenyRules(configured: readonly string[]): readonly HardDenyRule[] {
  const rules: HardDenyRule[] = BUILTIN.map(([label, source]) => ({
    label,
    pattern: new RegExp(source, "i"),
  }));
  for (const source of configured) {
    try {
      rules.push({ label: `configured pattern /${source}/`, pattern: new RegExp(source, "i") });
    } catch (error) {
      throw new Error(`invalid hard-deny pattern /${source}/: ${(error as Error).message}`);
    }
  }
  return rules;
}

/**
 * The target strings of `args`, in order, with the key each is under: a target key's strings, in
 * lists as well, and so on down through lists and objects (save_skill's `files: [{path, from,
 * content}]`), each string judged by its own key — a listed item's content stays content. Walked
 * with a stack, not by recursion: a call's arguments nest as deep as the model likes.
 */
function targetsOf(args: Readonly<Record<string, unknown>>): Array<[key: string, text: string]> {
  const out: Array<[key: string, text: string]> = [];
  const stack: Array<[key: string, value: unknown]> = Object.entries(args).reverse();
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [key, value] = next;
    if (typeof value === "string") {
      if (TARGET_KEYS.has(key)) out.push([key, value]);
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push([key, value[i]]);
    } else if (typeof value === "object" && value !== null) {
      stack.push(...Object.entries(value).reverse());
    }
  }
  return out;
}

/** The texts the regular expressions see for one target: as written, and a command's lexed words. */
function subjectsOf(key: string, value: string): string[] {
  return key === "command" ? [value, ...lexedCommandWords(value).map((words) => words.join(" "))] : [value];
}

/** The first rule a call's targets hit, if any. */
export function matchHardDeny(
  rules: readonly HardDenyRule[],
  args: Readonly<Record<string, unknown>>,
): HardDenyMatch | undefined {
  if (typeof args.command === "string") {
    const rule = matchCommandRules(args.command);
    if (rule !== undefined) return { rule, subject: args.command };
  }
  for (const [key, text] of targetsOf(args)) {
    for (const subject of subjectsOf(key, text)) {
      for (const rule of rules) if (rule.pattern.test(subject)) return { rule: rule.label, subject };
    }
  }
  return undefined;
}
