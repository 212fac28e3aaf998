/**
 * Hard-deny rules: actions that are never allowed, whatever the mode, grant or approval.
 *
 * Rules are regular expressions matched against the *target* arguments of a call (command, path,
 * url, cwd, …), never against free content such as the text of a file being written. Built-in
 * rules cover wiping the disk or home directory, filesystem creation, raw device writes, fork
 * bombs, power control and reading credential files; configured patterns add to them. Keeping
 * file tools inside the workspace is the tools' own confinement job, not this list's.
 */

export interface HardDenyRule {
  readonly label: string;
  readonly pattern: RegExp;
}

export interface HardDenyMatch {
  readonly rule: string;
  readonly subject: string;
}

const BUILTIN: ReadonlyArray<readonly [label: string, source: string]> = [
  [
    "recursive delete of / or the home directory",
    String.raw`\brm\b[^;&|\n]*\s-(?:[a-zA-Z]*[rR][a-zA-Z]*|-recursive)\b[^;&|\n]*\s(?:--\s+)?(?:/|/\*|~/?\*?|\$\{?HOME\}?/?\*?)(?=$|[\s;&|])`,
  ],
  ["filesystem creation (mkfs)", String.raw`\bmkfs(?:\.[a-z0-9]+)?\b`],
  [
    "raw write to a block device",
    String.raw`\bdd\b[^;&|\n]*\bof=/dev/(?!null\b)|>\s*/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk)`,
  ],
  ["fork bomb", String.raw`:\s*\(\s*\)\s*\{[^}]*:\s*\|\s*:?\s*&[^}]*\}`],
  [
    "recursive permission change of /",
    String.raw`\bch(?:mod|own)\b[^;&|\n]*\s-[a-zA-Z]*R[^;&|\n]*\s/(?=$|[\s;&|])`,
  ],
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

function collectStrings(value: unknown, out: string[]): void {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const item of value) collectStrings(item, out);
}

/** The target strings of a call's arguments. */
export function targetStrings(args: Readonly<Record<string, unknown>>): string[] {
  const out: string[] = [];
  for (const [key, value] of Object.entries(args)) if (TARGET_KEYS.has(key)) collectStrings(value, out);
  return out;
}

/** The first rule a call's targets hit, if any. */
export function matchHardDeny(
  rules: readonly HardDenyRule[],
  args: Readonly<Record<string, unknown>>,
): HardDenyMatch | undefined {
  for (const subject of targetStrings(args)) {
    for (const rule of rules) if (rule.pattern.test(subject)) return { rule: rule.label, subject };
  }
  return undefined;
}
