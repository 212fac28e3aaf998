/**
 * `coworker start`: load and validate the config (the same validation `doctor` runs), insist on
 * a model endpoint, pick the log destination (a file when the console runs, so logs do not
 * interleave with the chat), start the app with the doctor's model check as its model phase and
 * its workspace and Telegram access checks as warnings under the banner (starting anyway), tell
 * the executable when start-up is over (`onStartedUp`: ready, and every channel's first connection
 * attempt ended), and wait until it has shut down. A start-up failure is one line saying what
 * failed and the fix, never a stack. Returns the exit code. While it runs, an uncaught exception
 * or unhandled rejection ends the process with a clear line and exit code 1 (see ops/fatal-errors).
 */
import { join } from "node:path";
import { defaultAssembly } from "../app/assembly.js";
import { planChannels } from "../app/channel-plan.js";
import { startApp } from "../app/start-app.js";
import { StartupInterrupted } from "../app/startup-phase.js";
import { loadConfig } from "../config/load-config.js";
import type { CoworkerConfig } from "../config/schema.js";
import { modelBaseUrl, NO_MODEL_ENDPOINT_HELP } from "../config/model-endpoint.js";
import { createLogger, type Logger } from "../logging/logger.js";
import { scrubSecrets } from "../logging/redact.js";
import { ServiceFailure } from "../core/failure.js";
import { installFatalHandlers } from "../ops/fatal-errors.js";
import type { CliIo } from "./cli-io.js";
import { workspaceCheck } from "./doctor-workspace-check.js";
import { CHECK_TIME_LIMIT_MS, type CheckResult } from "./doctor.js";
import { telegramAccessCheck } from "./doctor-telegram-access-check.js";
import { modelCheck } from "./model-check.js";
import { packageVersion } from "./version.js";
import { CONSOLE_PLATFORM } from "../core/console-platform.js";

/** Print config problems, one per line. */
export function printProblems(io: CliIo, problems: readonly string[]): void {
  io.stderr.write(`✗ Configuration has ${problems.length} problem(s):\n`);
  for (const problem of problems) io.stderr.write(`  - ${problem}\n`);
  io.stderr.write("See config/coworker.example.yaml for every key, or run `coworker doctor`.\n");
}

function flush(logger: Logger): Promise<void> {
  return new Promise((resolve) => logger.flush(() => resolve()));
}

/** Run `coworker start`; resolves with the exit code. */
export async function startCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const loaded = loadConfig({ env: io.env, cwd: io.cwd, argv });
  if (!loaded.ok) {
    printProblems(io, loaded.problems);
    return 1;
  }
  const config = loaded.config;
  if (modelBaseUrl(config.model) === undefined) {
    io.stderr.write(`✗ ${NO_MODEL_ENDPOINT_HELP}\n`);
    return 1;
  }
  const assembly = io.assembly ?? defaultAssembly;
  const planned = planChannels(config, assembly.channels);
  const consoleMode = planned.includes(CONSOLE_PLATFORM);
  const logFile = consoleMode ? join(config.data_dir, "coworker.log") : undefined;
  const logger = createLogger({ level: config.log.level, ...(logFile ? { file: logFile } : {}) });
  if (logFile) io.stderr.write(`Logs: ${logFile}\n`);
  const stopFaultHandlers = installFatalHandlers({
    logger,
    stderr: io.stderr,
    exit: io.forceExit,
    ...(io.faults ? { source: io.faults } : {}),
  });
  try {
    const app = await startApp(config, logger, {
      assembly,
      io,
      version: packageVersion(),
      configSource: loaded.source,
      forceExit: io.forceExit,
      ...(io.signals ? { signals: io.signals } : {}),
      checkModel: (signal) => checkModelAtStart(config.model, io, signal),
      checkSetup: () => checkSetupAtStart(config, planned),
    });
    void app.channelsSettled.then(() => io.onStartedUp?.());
    const code = await app.stopped;
    await flush(logger);
    return code;
  } catch (error) {
    if (error instanceof StartupInterrupted) {
      await flush(logger);
      return error.exitCode;
    }
    if (error instanceof ServiceFailure) {
      logger.error({ kind: error.kind, reason: error.reason, fix: error.fix }, "startup failed");
      await flush(logger);
      io.stderr.write(`✗ Coworker could not start: ${scrubSecrets(error.line())}\n`);
      return 1;
    }
    logger.error({ err: error }, "startup failed");
    await flush(logger);
    io.stderr.write(
      `✗ Coworker could not start: ${scrubSecrets(error instanceof Error ? error.message : String(error))}\n`,
    );
    return 1;
  } finally {
    stopFaultHandlers();
  }
}

/** The start-up model phase: the doctor's model check, as a warning line unless it passed. */
async function checkModelAtStart(
  model: Parameters<typeof modelCheck>[0],
  io: CliIo,
  signal: AbortSignal,
): Promise<string | undefined> {
  const fetchImpl = io.doctor?.fetch ?? ((input, init) => fetch(input, init));
  const check = modelCheck(model, fetchImpl);
  return warningLine("the model endpoint", await check.run(signal));
}

/**
 * The doctor's checks of the setup that `start` would otherwise run past in silence: a workspace
 * this user may not read and write, and a Telegram bot nobody may use. Warning lines, in order.
 */
async function checkSetupAtStart(config: CoworkerConfig, planned: readonly string[]): Promise<string[]> {
  const checks = [
    workspaceCheck(config.workspace),
    ...(planned.includes("telegram") ? [telegramAccessCheck(config.telegram)] : []),
  ];
  const lines: string[] = [];
  for (const check of checks) {
    const line = warningLine(check.name, await check.run(AbortSignal.timeout(CHECK_TIME_LIMIT_MS)));
    if (line !== undefined) lines.push(line);
  }
  return lines;
}

/** A doctor check's result as start's warning line, or undefined when it passed or was skipped. */
function warningLine(name: string, result: CheckResult): string | undefined {
  if (result.status === "pass" || result.status === "skip") return undefined;
  const fix = result.fix === undefined ? "" : ` — fix: ${result.fix}`;
  return scrubSecrets(`! ${name}: ${result.summary}${fix} (starting anyway)`);
}
