/**
 * The environment a command (or an MCP server) runs with: an allow-list of harmless variables
 * from the service's environment — never bot tokens, API keys or other secrets — plus a few
 * settings that keep tools non-interactive, plus whatever the configuration sets explicitly.
 */

/** Variables copied from the service's environment when present. */
export const PASSED_ENV_NAMES: readonly string[] = Object.freeze([
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LANGUAGE",
  "TERM",
  "TMPDIR",
  "TZ",
]);

/** Locale variables (LC_ALL, LC_CTYPE, …) are passed too. */
const PASSED_ENV_PATTERN = /^LC_[A-Z_]+$/;

/** Set for every command so pagers and credential prompts never wait for a keyboard. */
export const NON_INTERACTIVE_ENV: Readonly<Record<string, string>> = Object.freeze({
  PAGER: "cat",
  GIT_PAGER: "cat",
  GIT_TERMINAL_PROMPT: "0",
  DEBIAN_FRONTEND: "noninteractive",
});

/** Build a clean environment from `source` (default: this process) plus explicit `extra` values. */
export function cleanEnv(
  extra: Readonly<Record<string, string>> = {},
  source: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(source)) {
    if (value !== undefined && (PASSED_ENV_NAMES.includes(name) || PASSED_ENV_PATTERN.test(name))) {
      env[name] = value;
    }
  }
  return { ...env, ...NON_INTERACTIVE_ENV, ...extra };
}
