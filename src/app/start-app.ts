/**
 * startApp: brings the service up in order — shutdown handling, store, ops server, the session
 * layer from the assembly, then every channel whose credentials are present (the console when
 * none are), then lets the session layer resume earlier work — and registers each part's
 * readiness check, drainer and closer. If any step fails, what already started is shut down
 * before the error is rethrown.
 */
import { mkdir } from "node:fs/promises";
import type { CoworkerConfig } from "../config/schema.js";
import type { Logger } from "../logging/logger.js";
import { createMetrics } from "../ops/metrics.js";
import { startOpsServer } from "../ops/ops-server.js";
import { Readiness } from "../ops/readiness.js";
import { Shutdown, type SignalSource } from "../ops/shutdown.js";
import type { ConversationService } from "../sessions/contracts.js";
import { describeSandboxStatus, type SandboxStatus } from "../tools/shell/sandbox-backend.js";
import { createShellSandbox } from "../tools/shell/shell-sandbox.js";
import { createStore } from "../store/create-store.js";
import type { AppAssembly, AppContext, AppIo, ChannelStarter, RunningChannel } from "./app-parts.js";
import { formatBanner } from "./banner.js";
import { startConsoleChannel } from "./console-starter.js";

export interface StartAppOptions {
  readonly assembly: AppAssembly;
  readonly io: AppIo;
  readonly version: string;
  readonly configSource: string | undefined;
  /** Ends the process on a second signal. */
  readonly forceExit: (code: number) => void;
  /** Signal source; default `process`. */
  readonly signals?: SignalSource;
}

export interface RunningApp {
  readonly context: AppContext;
  readonly opsUrl: string;
  readonly channels: readonly string[];
  /** Resolves with the exit code once the app has shut down. */
  readonly stopped: Promise<number>;
}

/** The channels `start` will run: those with credentials, or the console when there are none. */
export function planChannels(config: CoworkerConfig, starters: readonly ChannelStarter[]): readonly string[] {
  const configured = starters.filter((starter) => starter.hasCredentials(config)).map((s) => s.platform);
  return configured.length > 0 ? configured : ["console"];
}

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

async function startChannels(
  context: AppContext,
  options: StartAppOptions,
  service: ConversationService,
): Promise<readonly string[]> {
  const channelContext = { ...context, service };
  const starters = options.assembly.channels.filter((starter) => starter.hasCredentials(context.config));
  const started: { platform: string; channel: RunningChannel }[] = [];
  for (const starter of starters) {
    started.push({ platform: starter.platform, channel: await starter.start(channelContext) });
  }
  if (started.length === 0)
    started.push({ platform: "console", channel: startConsoleChannel(channelContext, options.io) });
  for (const { platform, channel } of started) {
    context.readiness.register(`channel:${platform}`, () => channel.connected());
    context.shutdown.onStopIntake(platform, () => channel.stopIntake());
    context.shutdown.addCloser(platform, () => channel.close());
  }
  return started.map(({ channel }) => channel.description);
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
export async function startApp(
  config: CoworkerConfig,
  logger: Logger,
  options: StartAppOptions,
): Promise<RunningApp> {
  const graceMs = config.server.shutdown_grace_s * 1000;
  const shutdown = new Shutdown({
    logger,
    graceMs,
    forceExit: options.forceExit,
    ...(options.signals ? { signals: options.signals } : {}),
  });
  shutdown.install();
  const metrics = createMetrics();
  const readiness = new Readiness();
  let started = false;
  readiness.register("startup", () => ({ ok: started, detail: started ? "started" : "starting" }));
  readiness.register("intake", () => ({
    ok: !shutdown.stopping,
    detail: shutdown.stopping ? "shutting down" : "open",
  }));
  try {
    await mkdir(config.workspace.root, { recursive: true });
    const store = await createStore({
      url: config.store_url,
      dataDir: config.data_dir,
      onError: (error) => logger.error({ err: error }, "store error"),
    });
    shutdown.addCloser("store", () => store.close());
    readiness.register("store", () => store.ping());
    const context: AppContext = { config, logger, metrics, readiness, shutdown, store };

    const ops = await startOpsServer({
      host: config.server.host,
      port: config.server.port,
      metrics,
      readiness,
      logger,
    });
    shutdown.addCloser("ops server", () => ops.close());

    const factory = options.assembly.createConversation;
    if (factory === undefined) throw new AssemblyIncompleteError();
    const conversation = await factory(context);
    shutdown.addDrainer("turns", async () => {
      await conversation.drain?.(graceMs);
    });
    shutdown.addCloser("conversation", async () => conversation.close?.());

    const shell = await createShellSandbox(config.tools.shell, {
      dataDir: config.data_dir,
      configFile: options.configSource,
    }).status();
    logShellStatus(logger, shell);
    const planned = planChannels(config, options.assembly.channels);
    options.io.stderr.write(
      formatBanner(config, {
        version: options.version,
        channels: planned,
        store: store.description,
        opsUrl: ops.url,
        configSource: options.configSource,
        shell: describeSandboxStatus(shell),
      }),
    );
    const channels = await startChannels(context, options, conversation.service);
    await conversation.start?.();
    started = true;
    logger.info({ channels, ops: ops.url, store: store.description }, "coworker started");
    return { context, opsUrl: ops.url, channels, stopped: shutdown.done };
  } catch (error) {
    await shutdown.run("startup failed");
    throw error;
  }
}
