/**
 * Secret hygiene shared by logging, config errors, the banner and doctor output: which keys hold
 * secrets, a scrubber for token-shaped strings (Slack, OpenAI, Telegram, GitHub, GitLab, Hugging
 * Face and Google API tokens, Stripe keys, Slack webhook URLs, bearer headers, cookie headers, URL passwords, secret-named
 * URL query parameters, `…_TOKEN=` / `…_PASSWORD=`-style assignments and, on command lines,
 * `--password x` / `--token=x`-style flags, `-u user:pass` and mysql's `-pPASS`), and deep redactors for structured data (secret-named
 * fields and every other string scrubbed, or secret-named fields alone for text scrubbed whole later).
 */

/** Replacement text for a hidden value. */
export const REDACTED = "[redacted]";

const SECRET_KEY =
  /token|secret|password|passwd|authorization|cookie|credential|api[-_]?key|private[-_]?key/i;

/** Whether a property name holds a secret (`bot_token`, `apiKey`, `Authorization`, …). */
export function isSecretKey(name: string): boolean {
  return SECRET_KEY.test(name);
}

interface Pattern {
  readonly re: RegExp;
  readonly replace: string;
}

const PATTERNS: readonly Pattern[] = [
  // Credential headers written out as text ("x-api-key: abc", "Authorization=Bearer abc") or as
  // JSON ('"x-api-key":"abc"', escaped inside a log line); an opening quote, escaped or not,
  // stays, and quotes and backslashes end the value.
  {
    re: /\b(authorization|proxy-authorization|x-api-key|api-key|x-auth-token)((?:\\?["'])?\s*[:=]\s*)((?:\\?["'])?)(?!(?:(?:bearer|basic|token|bot)\s+)?\[redacted\])((?:bearer|basic|token|bot)\s+)?[^\s"',;\\]+/gi,
    replace: `$1$2$3$4${REDACTED}`,
  },
  // Slack bot / user / app / config / client tokens and session cookies.
  { re: /\b(xox[abposrecd]|xapp|xoxe\.xox[bp])-[A-Za-z0-9-]{6,}/g, replace: `$1-${REDACTED}` },
  // OpenAI-style keys, including sk-proj- and OpenRouter's sk-or-.
  { re: /\bsk-[A-Za-z0-9_-]{12,}/g, replace: `sk-${REDACTED}` },
  // Telegram bot tokens, bare or inside an API URL (`/bot123:abc/`, or `bot123%3Aabc` encoded).
  { re: /\b(bot)?\d{5,12}(?::|%3A)[A-Za-z0-9_-]{30,}/g, replace: `$1${REDACTED}` },
  // GitHub tokens: classic (ghp_, gho_, ghu_, ghs_, ghr_) and fine-grained (github_pat_).
  { re: /\b(gh[pousr]_)[A-Za-z0-9]{20,}/g, replace: `$1${REDACTED}` },
  { re: /\bgithub_pat_[A-Za-z0-9_]{20,}/g, replace: `github_pat_${REDACTED}` },
  // GitLab personal, project and group access tokens.
  { re: /\bglpat-[A-Za-z0-9_-]{20,}/g, replace: `glpat-${REDACTED}` },
  // Hugging Face tokens: hf_ and 34 letters and digits, never an underscore (names such as
  // hf_hub_download_with_retries, in code and paths quoted by notices, stay).
  { re: /\bhf_[A-Za-z0-9]{30,}/g, replace: `hf_${REDACTED}` },
  // Stripe secret and restricted keys and webhook signing secrets.
  { re: /\b((?:sk|rk)_(?:live|test)_|whsec_)[A-Za-z0-9]{8,}/g, replace: `$1${REDACTED}` },
  // Google API keys.
  { re: /\bAIza[0-9A-Za-z_-]{30,}/g, replace: `AIza${REDACTED}` },
  // Slack incoming-webhook and workflow URLs: the path is the credential.
  {
    re: /\b(hooks\.slack\.com\/(?:services|workflows|triggers)\/)[A-Za-z0-9_/-]+/g,
    replace: `$1${REDACTED}`,
  },
  // Assignments to a secret-named variable, as in an env file or a command line
  // (`GITHUB_TOKEN=…`, `DB_PASSWORD="…"`, `AWS_SECRET_ACCESS_KEY=…`): the name must end in the
  // secret word, so `max_tokens=4096` stays. An opening quote (escaped, in a JSON line) stays;
  // quotes and backslashes end the value, so a JSON line's escaped quote is never eaten.
  {
    re: /\b([A-Za-z0-9_]*?(?:token|secret|password|passwd|api_?key|secret_key|access_key|private_key))=((?:\\?["'])?)[^\s"'\\;&]+/gi,
    replace: `$1=$2${REDACTED}`,
  },
  // Secret-named command-line flags, with `=` or whitespace before the value (`--password x`,
  // `--token=x`, `--api-key "x y"`): a quoted value (escaped or not) runs to a quote, backslash or
  // line end, a bare one to whitespace; a value that is the next flag (`--token --verbose`) stays.
  {
    re: /(?<![\w-])(--(?:password|passwd|pass|token|secret|api-key|apikey|access-token|auth-token|auth))(=|\s+)(?!-)(?:(\\?["'])[^"'\\\n\r]+|[^\s"'\\]+)/gi,
    replace: `$1$2$3${REDACTED}`,
  },
  // A user and password flag (`curl -u admin:pw`, `-uadmin:pw`, `--user admin:pw`): the part after
  // the first colon.
  {
    re: /(?<![\w-])(-u\s*|--user(?:=|\s+))((?:\\?["'])?)([^\s:"'\\]+):[^\s"'\\]+/g,
    replace: `$1$2$3:${REDACTED}`,
  },
  // Cookie headers written out as text (`Cookie: session=…; id=…`): the whole value, to a quote,
  // backslash or line end.
  {
    re: /\b(set-cookie|cookie)(\s*:[ \t]*)((?:\\?["'])?)[^"'\\\n\r]+/gi,
    replace: `$1$2$3${REDACTED}`,
  },
  // Secret-named URL query parameters (`?api_key=…`, `&access_token=…`, `&sig=…`, and the
  // `?ticket=…` of a Slack Socket Mode URL, which opens the app's event stream).
  {
    re: /([?&](?:[A-Za-z0-9_.-]*?(?:token|secret|password|passwd|api_?key|signature)|key|sig|ticket))=[^&#\s"'\\]+/gi,
    replace: `$1=${REDACTED}`,
  },
  // Authorization header values outside a header (`"Bearer eyJ0…"` in an error, `Basic dXNlcjpw…`):
  // the scheme as a header writes it and a value with a digit, `+` or `=` in it, as a token or
  // base64 has, so prose ("Basic Information", "the bot requires", "Bearer tokens") stays.
  {
    re: /\b(Bearer|bearer|BEARER|Basic|Bot)\s+(?=[A-Za-z._~/:-]*[0-9+=])[A-Za-z0-9._~+/=:-]{8,}/g,
    replace: `$1 ${REDACTED}`,
  },
  // Passwords in URLs (redis://:pw@host, postgres://user:pw@host); quotes end a match, so a JSON
  // line is never cut across fields. The match starts at `://` (checked first) with the scheme
  // looked for behind it: starting at the scheme, every word start in a long `a.a.a…` run read the
  // run to its end, quadratic in a long command or message that gets logged.
  { re: /(?=:\/\/)(?<=\b[a-z][a-z0-9+.-]*)(:\/\/[^\s:/@"]*):[^\s@/"]+@/gi, replace: `$1:${REDACTED}@` },
];

/**
 * Secrets this process holds whose shape no pattern knows (a model endpoint's API key can be any
 * string): every scrub takes them out by value, wherever a server or library echoed them.
 */
const knownSecrets = new Set<string>();

/** Known secrets shorter than this are not taken out: cutting them would mangle ordinary text. */
const MIN_KNOWN_SECRET_CHARS = 8;

/**
 * Take `value` out of every scrubbed text from now on (ignored when blank or short). Its JSON
 * form is taken out too: a log line is scrubbed as JSON text, where a secret holding a quote, a
 * backslash or a control character is written escaped.
 */
export function registerSecret(value: string | undefined): void {
  if (value === undefined || value.length < MIN_KNOWN_SECRET_CHARS) return;
  knownSecrets.add(value);
  knownSecrets.add(JSON.stringify(value).slice(1, -1));
}

/**
 * Replace the known secrets and token-shaped substrings with `[redacted]` (a token keeps a
 * recognisable prefix).
 */
export function scrubSecrets(text: string): string {
  let out = text;
  for (const secret of knownSecrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  for (const { re, replace } of PATTERNS) out = out.replace(re, replace);
  return scrubMysqlPasswords(out);
}

/**
 * A mysql client's program names, a command separator (`;`, `&`, `|`, a line end, raw or
 * JSON-escaped) and a `-p` flag with its value attached (`-pSecret`, `-p'Secret'`), in one pass.
 */
const MYSQL_TOKENS =
  /\b(?:mysql(?:dump|admin|import|show|check)?|mariadb(?:-dump|-admin)?)\b|[;&|\n\r]|\\n|(?<![\w-])(-p)((?:\\?["'])?)[^\s"'\\;&|]+/g;

/**
 * mysql's `-pPASSWORD` (the value attached to the flag), only within a command that a mysql client
 * program starts: `mkdir -p build`, `cp -p a b` and `ssh -p 22` stay. One left-to-right pass that
 * remembers whether the current command is a mysql one, so the work stays linear in the text.
 */
function scrubMysqlPasswords(text: string): string {
  if (!/mysql|mariadb/i.test(text)) return text;
  let inMysql = false;
  return text.replace(MYSQL_TOKENS, (match: string, flag?: string, quote?: string) => {
    if (flag === undefined) {
      inMysql = /^[a-z]/i.test(match);
      return match;
    }
    return inMysql ? `${flag}${quote ?? ""}${REDACTED}` : match;
  });
}

const MAX_DEPTH = 8;

/**
 * A copy of `value` in which every secret-named string property is `[redacted]` and every other
 * string is scrubbed (numbers such as `max_output_tokens` stay readable). Errors, dates and
 * other class instances are left for their serializers.
 */
export function redactDeep(value: unknown): unknown {
  return redactWalk(value, 0, scrubSecrets);
}

/**
 * A copy of `value` in which every secret-named string property is `[redacted]`, the other strings
 * left as they are: for text that is scrubbed whole afterwards, as a log line is (logger.ts).
 */
export function redactSecretKeys(value: unknown): unknown {
  return redactWalk(value, 0, (text) => text);
}

function redactWalk(value: unknown, depth: number, leaf: (text: string) => string): unknown {
  if (typeof value === "string") return leaf(value);
  if (value === null || typeof value !== "object" || depth >= MAX_DEPTH) return value;
  if (Array.isArray(value)) return value.map((item) => redactWalk(item, depth + 1, leaf));
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    out[key] = isSecretKey(key) && typeof item === "string" ? REDACTED : redactWalk(item, depth + 1, leaf);
  }
  return out;
}

const SECRET_FIELDS = [
  "token",
  "bot_token",
  "botToken",
  "app_token",
  "appToken",
  "api_key",
  "apiKey",
  "signing_secret",
  "signingSecret",
  "secret",
  "password",
  "authorization",
  "Authorization",
  "cookie",
];

/** pino `redact` paths: the secret fields at the top level, one level down and in request headers. */
export const REDACT_PATHS: readonly string[] = [
  ...SECRET_FIELDS,
  ...SECRET_FIELDS.map((field) => `*.${field}`),
  "headers.authorization",
  "req.headers.authorization",
  "req.headers.cookie",
  "*.headers.authorization",
  "*.headers.Authorization",
];
