/**
 * startApp: brings the service up as a state machine of phases with deadlines (startup-phase.ts):
 * store → ops server → model check → session layer → channels → ready. Platform channels connect
 * in the background under a ChannelSupervisor each (bounded, visible retries), so none blocks the
 * others, the console or start-up; /readyz reports each channel's state and reason, /healthz
 * fails once a configured channel has been down past `ops.channel_down_grace_s`. A signal during
 * start-up ends it (StartupInterrupted); a failing phase shuts down what started and rethrows.
 * On SQLite and Postgres the store phase first takes the single-process lock (store/single-process-lock.ts);
 * a lock lost and not taken again shuts the app down with exit code 1.
 * The configuration's secrets are handed to the redactor first, once (loading registers none).
 */
import { mkdir } from "node:fs/promises";
import { registerConfigSecrets } from "../config/config-secrets.js";
import type { CoworkerConfig } from "../config/schema.js";
import type { Logger } from "../logging/logger.js";
import { scrubSecrets } from "../logging/redact.js";
import { CONSOLE_PLATFORM } from "../core/console-platform.js";
import type { ServiceFailure } from "../core/failure.js";
import { createMetrics } from "../ops/metrics.js";
import { createCoordination } from "../store/coordination/create-coordination.js";
import { newProcessId } from "./process-id.js";
import { startOpsServer } from "../ops/ops-server.js";
import { Readiness } from "../ops/readiness.js";
import { Shutdown, type SignalSource } from "../ops/shutdown.js";
import { describeSandboxStatus, type SandboxStatus } from "../tools/shell/sandbox-backend.js";
import { createShellSandbox, hiddenServicePaths } from "../tools/shell/shell-sandbox.js";
import { createStore } from "../store/create-store.js";
import { takeSingleProcessLock } from "../store/single-process-lock.js";
import { storeSlotBudget } from "../store/slot-budget.js";
import { storeFailure } from "../store/store-failure.js";
import type { AppAssembly, AppContext, AppIo, ChannelContext, ChannelStarter } from "./app-parts.js";
import { uploadGateFromConfig } from "./attachment-intake.js";
import { formatBanner } from "./banner.js";
import { planChannels } from "./channel-plan.js";
import { ChannelSupervisor } from "./channel-supervisor.js";
import { startConsoleChannel } from "./console-starter.js";
import { StartupPhases } from "./startup-phase.js";

export interface StartAppOptions {
  readonly assembly: AppAssembly;
  readonly io: AppIo;
  readonly version: string;
  readonly configSource: string | undefined;
  /** Ends the process on a second signal, or when shutdown overruns. */
  readonly forceExit: (code: number) => void;
  /** Signal source; default `process`. */
  readonly signals?: SignalSource;
  /** The model check phase: resolves with a warning line when the endpoint does not answer well. */
  readonly checkModel?: (signal: AbortSignal) => Promise<string | undefined>;
  /**
   * Checks of the setup run once the workspace root exists (it is unwritable, nobody may use the
   * Telegram bot …): resolves with warning lines, shown under the banner and logged.
   */
  readonly checkSetup?: () => Promise<readonly string[]>;
}

export interface RunningApp {
  readonly context: AppContext;
  /** Undefined when `ops.enabled` is false. */
  readonly opsUrl: string | undefined;
  /** The planned channels' platforms ("slack", "telegram", "console"). */
  readonly channels: readonly string[];
  /** Resolves with the exit code once the app has shut down. */
  readonly stopped: Promise<number>;
  /** Resolves once every platform channel's first connection attempt has ended, connected or not. */
  readonly channelsSettled: Promise<void>;
}

/** Said at start when `console.enabled: true`: the console runs, beside any platform, unchecked. */
export const CONSOLE_UNCHECKED =
  "console.enabled is true: whoever types at this terminal is the console's user, with NO access " +
  "checks — they own the console session (approve its cards, auto mode, standing grants) and run its tools";

/** Thrown when the assembly has no session layer to run channels against. */
export class AssemblyIncompleteError extends Error {
  constructor() {
    super(
      "no conversation service is assembled: src/app/assembly.ts must set createConversation " +
        "(the SessionManager with its engine factory) before channels can run",
    );
    this.name = "AssemblyIncompleteError";
  }
}

/** Backoff between connection attempts, and the longest one attempt may take. */
const CONNECT = { attemptMs: 30_000, backoff: { initialMs: 1_000, maxMs: 60_000 } } as const;

function superviseChannels(
  context: ChannelContext,
  starters: readonly ChannelStarter[],
  warn: (line: string, failure: ServiceFailure, platform: string) => void,
): ChannelSupervisor[] {
  return starters.map((starter) => {
    const supervisor = new ChannelSupervisor({
      platform: starter.platform,
      connect: (signal) => starter.start(context, signal),
      warn: (line, failure) => warn(line, failure, starter.platform),
      onUp: (channel) => context.logger.info({ channel: channel.description }, "channel connected"),
      ...CONNECT,
    });
    context.readiness.register(`channel:${starter.platform}`, async () => {
      const status = await supervisor.status();
      return {
        ok: status.state === "up",
        detail: status.reason === undefined ? status.state : `${status.state}: ${status.reason}`,
      };
    });
    context.shutdown.onStopIntake(starter.platform, () => supervisor.stopIntake());
    context.shutdown.addCloser(starter.platform, () => supervisor.close());
    supervisor.start();
    return supervisor;
  });
}

/** Say at start how run_command will run; a disabled or unsandboxed shell is worth a warning. */
function logShellStatus(logger: Logger, shell: SandboxStatus): void {
  if (shell.kind === "unavailable")
    logger.error(
      { reason: shell.reason, fix: shell.fix },
      "shell disabled: run_command answers 'shell unavailable' until the sandbox can run",
    );
  else if (shell.kind === "unsandboxed") logger.warn({ shell: shell.description }, "shell runs UNSANDBOXED");
  else logger.info({ shell: shell.description }, "shell sandbox ready");
}

/** Start the app; resolves once every part is up (then `stopped` tells when it ended). */
/** /healthz problems: configured channels down for longer than the grace period. */
function channelHealth(supervisors: readonly ChannelSupervisor[], graceMs: number) {
  return async (): Promise<readonly string[]> => {
    const problems: string[] = [];
    for (const supervisor of supervisors) {
      const down = await supervisor.downForMs();
      if (down > graceMs) problems.push(`${supervisor.platform} down for ${Math.round(down / 1_000)} s`);
    }
    return problems;
  };
}

/** Start the app; resolves once every phase has run (channels may still be connecting). */
export async function startApp(
  config: CoworkerConfig,
  logger: Logger,
  options: StartAppOptions,
): Promise<RunningApp> {
  registerConfigSecrets(config);
  const graceMs = config.server.shutdown_grace_s * 1000;
  const shutdown = new Shutdown({
    logger,
    graceMs,
    forceExit: options.forceExit,
    ...(options.signals ? { signals: options.signals } : {}),
  });
  shutdown.install();
  const phases = new StartupPhases(() => shutdown.stopping, shutdown.done);
  const processId = newProcessId();
  const metrics = createMetrics();
  const readiness = new Readiness();
  readiness.register("startup", () => ({
    ok: phases.phase === "ready",
    detail: phases.phase === "ready" ? "started" : `starting (${phases.phase})`,
  }));
  readiness.register("intake", () => ({
    ok: !shutdown.stopping,
    detail: shutdown.stopping ? "shutting down" : "open",
  }));
  const warn = (raw: string, failure: ServiceFailure, part: string): void => {
    const line = scrubSecrets(raw);
    options.io.stderr.write(`${line}\n`);
    logger.warn({ part, kind: failure.kind }, line);
  };
  const supervisors: ChannelSupervisor[] = [];
  let lockLost = false;
  let markStarted: () => void = () => undefined;
  const started = new Promise<void>((resolve) => {
    markStarted = resolve;
  });
  try {
    const store = await phases.run("store", async () => {
      await mkdir(config.workspace.root, { recursive: true });
      // Before the store opens, so a second process on it stops here; released after the store closes.
      const lock = await takeSingleProcessLock({
        url: config.store_url,
        dataDir: config.data_dir,
        onWait: (line) => logger.warn(line),
        onRetaken: (line) => logger.warn(line),
        // Running on without it would let a second process start beside this one: stop, as a failure.
        onLost: (error) => {
          lockLost = true;
          const line = `${scrubSecrets(error.message)}; shutting down`;
          options.io.stderr.write(`✗ ${line}\n`);
          logger.error(line);
          void shutdown.run("single-process lock lost");
        },
      }).catch((error: unknown) => {
        throw storeFailure(error, config.store_url !== undefined, config.data_dir);
      });
      if (lock) shutdown.addCloser("store lock", () => lock.release());
      return createStore({
        url: config.store_url,
        dataDir: config.data_dir,
        keyPrefix: config.store_redis_prefix,
        onError: (error) => logger.error({ err: error }, "store error"),
      }).catch((error: unknown) => {
        throw storeFailure(error, config.store_url !== undefined, config.data_dir);
      });
    });
    shutdown.addCloser("store", () => store.close());
    readiness.register("store", () => store.ping());
    const coordination = await createCoordination({
      url: config.store_url,
      dataDir: config.data_dir,
      keyPrefix: config.store_redis_prefix,
      store,
      onError: (error) => logger.error({ err: error }, "coordination error"),
      onWarn: (message) => logger.warn(message),
    });
    shutdown.addCloser("coordination", () => coordination.close());
    if (coordination.distributed) {
      readiness.register("coordination", () => coordination.ping());
      metrics.labelProcess(processId);
    }
    const service = { dataDir: config.data_dir, configFile: options.configSource };
    const context: AppContext = {
      config,
      logger,
      metrics,
      readiness,
      shutdown,
      store,
      coordination,
      budget: storeSlotBudget(store.space("budgets")),
      uploads: uploadGateFromConfig(config, store, logger),
      processId,
      shell: createShellSandbox(config.tools.shell, service),
      serviceFiles: hiddenServicePaths(service),
    };

    const ops = config.ops.enabled
      ? await phases.run("ops", () =>
          startOpsServer({
            host: config.ops.host,
            port: config.ops.port,
            metrics,
            readiness,
            logger,
            health: channelHealth(supervisors, config.ops.channel_down_grace_s * 1000),
          }),
        )
      : undefined;
    if (ops) shutdown.addCloser("ops server", () => ops.close());

    const modelWarning = options.checkModel
      ? await phases.run(
          "model check",
          () => options.checkModel?.(AbortSignal.timeout(8_000)) ?? Promise.resolve(undefined),
        )
      : undefined;
    if (modelWarning !== undefined) {
      options.io.stderr.write(`${modelWarning}\n`);
      logger.warn(modelWarning);
    }

    const factory = options.assembly.createConversation;
    if (factory === undefined) throw new AssemblyIncompleteError();
    const conversation = await phases.run("conversation", () => factory(context));
    shutdown.addDrainer("turns", async () => {
      await conversation.drain?.(graceMs);
    });
    shutdown.addCloser("conversation", async () => conversation.close?.());

    const shell = await context.shell.status();
    logShellStatus(logger, shell);
    const planned = planChannels(config, options.assembly.channels);
    const setupWarnings = (await options.checkSetup?.()) ?? [];
    for (const line of setupWarnings) logger.warn(line);
    options.io.stderr.write(
      formatBanner(config, {
        version: options.version,
        channels: planned,
        store: store.description,
        opsUrl: ops?.url,
        configSource: options.configSource,
        shell: describeSandboxStatus(shell),
        warnings: setupWarnings,
      }),
    );
    const channelContext: ChannelContext = { ...context, service: conversation.service };
    const starters = options.assembly.channels.filter((starter) => planned.includes(starter.platform));
    supervisors.push(...superviseChannels(channelContext, starters, warn));
    if (planned.includes(CONSOLE_PLATFORM)) {
      if (config.console.enabled === true) {
        options.io.stderr.write(`! ${CONSOLE_UNCHECKED}\n`);
        logger.warn(CONSOLE_UNCHECKED);
      }
      startConsoleChannel(channelContext, options.io, {
        otherChannels: starters.map((starter) => starter.platform),
        started,
      });
    }
    await phases.run("channels", async () => conversation.start?.());
    phases.ready();
    markStarted();
    logger.info({ channels: planned, ops: ops?.url, store: store.description }, "coworker started");
    return {
      context,
      opsUrl: ops?.url,
      channels: planned,
      stopped: shutdown.done.then((code) => (lockLost ? Math.max(code, 1) : code)),
      channelsSettled: Promise.all(supervisors.map((supervisor) => supervisor.firstAttempt)).then(
        () => undefined,
      ),
    };
  } catch (error) {
    markStarted();
    await shutdown.run("startup failed");
    throw error;
  }
}
