/**
 * Parse the command line and dispatch to `start`, `doctor`, `healthcheck`, help or version.
 * Returns the exit code. The commands are imported when run, so `--help` and `--version` load
 * almost nothing.
 */
import { parseArgs } from "node:util";
import type { CliIo } from "./cli-io.js";
import { helpText } from "./help.js";
import { packageVersion } from "./version.js";

const OPTIONS = {
  config: { type: "string", short: "c" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "v" },
} as const;

/** Exit code for a command line that cannot be understood. */
export const USAGE_ERROR = 2;

/** Run the CLI with `argv` (without node and script). */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    io.stderr.write(
      `${error instanceof Error ? error.message : String(error)}\nRun \`coworker --help\` for usage.\n`,
    );
    return USAGE_ERROR;
  }
  const version = packageVersion();
  if (parsed.values.version) {
    io.stdout.write(`${version}\n`);
    return 0;
  }
  const [command, ...extra] = parsed.positionals;
  if (parsed.values.help || command === undefined || command === "help") {
    io.stdout.write(helpText(version));
    return 0;
  }
  if (extra.length > 0) {
    io.stderr.write(`unexpected argument "${extra[0]}"\nRun \`coworker --help\` for usage.\n`);
    return USAGE_ERROR;
  }
  switch (command) {
    case "start":
      return (await import("./start-command.js")).startCommand(argv, io);
    case "doctor":
      return (await import("./doctor-command.js")).doctorCommand(argv, io);
    case "healthcheck":
      return (await import("./healthcheck-command.js")).healthcheckCommand(argv, io);
    default:
      io.stderr.write(`unknown command "${command}" — commands: start, doctor, healthcheck, help\n`);
      return USAGE_ERROR;
  }
}
