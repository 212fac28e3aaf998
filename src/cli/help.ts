/** The `--help` text: commands, options and the environment variables that override the config. */

/** Help text for `coworker --help`. */
export function helpText(version: string): string {
  return `Coworker ${version} — a tool-using AI agent for Slack threads and Telegram chats.

Usage: coworker <command> [options]

Commands:
  start     Start the agent: every channel whose credentials are set, or a terminal
            chat (the console channel) when none are
  doctor    Check the config, Slack / Telegram tokens, model endpoint, store and
            workspace; prints a fix for each failure and exits 1 if any failed
  healthcheck
            Ask the running agent's /healthz on the configured ops port; exits 0
            when healthy, else 1 (the Docker image's HEALTHCHECK)
  help      Show this help

Options:
  -c, --config <file>  Config file (default: $COWORKER_CONFIG, else config/coworker.yaml)
  -h, --help           Show this help
  -v, --version        Print the version

Environment (overrides the config file; a .env file in the working directory is read too):
  Model      OPENAI_API_KEY, OPENAI_BASE_URL (e.g. http://localhost:11434/v1 for Ollama),
             COWORKER_MODEL, COWORKER_MODEL_VISION (auto | true | false: does it see images)
  Voice      COWORKER_TRANSCRIPTION_MODEL, COWORKER_TRANSCRIPTION_BASE_URL,
             COWORKER_TRANSCRIPTION_API_KEY (voice notes transcribed when set)
  Slack      SLACK_BOT_TOKEN, SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET (HTTP),
             SLACK_API_URL
  Telegram   TELEGRAM_BOT_TOKEN, TELEGRAM_ALLOWED_USERS (comma list), TELEGRAM_API_ROOT
  Agent      COWORKER_MODE (interactive | auto | plan | discuss | reviewed), COWORKER_APPROVERS
             (comma list of platform:user ids, e.g. slack:U0123,telegram:4567)
  Reviewer   COWORKER_REVIEWER_MODEL, COWORKER_REVIEWER_BASE_URL (default: the model's),
             COWORKER_REVIEWER_API_KEY (default: the model's, only on the model's endpoint)
  Storage    COWORKER_DATA_DIR (default ./data), COWORKER_WORKSPACE (default ./workspace),
             COWORKER_STORE_URL (redis://… or postgres://…; default SQLite in the data dir),
             COWORKER_STORE_REDIS_PREFIX (keys of this deployment on a shared Redis)
  Schedules  COWORKER_DEFAULT_TIMEZONE (timezone of cron tasks when the person's is unknown)
  Shell      COWORKER_SHELL_SANDBOX (bubblewrap | off), COWORKER_SHELL_NETWORK (1 | 0)
  Ops        COWORKER_OPS_PORT (/healthz /readyz /metrics; default 8080, 0 = any free port)

Every key is documented in config/coworker.example.yaml.
`;
}
