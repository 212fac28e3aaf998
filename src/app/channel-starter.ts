/**
 * How any ChannelAdapter joins the app, the same way for every platform: the platform's own
 * module (slack-starter.ts, telegram-starter.ts) only turns the config into an adapter; this
 * file registers what the adapter offers — its thread outputs with the session layer and its
 * Messenger with the messaging tools before it starts, its directory with channel subscriptions,
 * its timezone lookup with scheduled tasks and its access rules with the wake-ups once it has
 * (wake-ups held until then: wake-access.ts) — wires its hooks to subscriptions
 * and schedules, and hands the ChannelSupervisor a RunningChannel on the adapter's lifecycle.
 * With several processes on one store, every adapter announces its people's stops to the others
 * (AdapterBase.laneStops).
 */
import type { AttachmentIntake } from "../attachments/inbound-attachments.js";
import type { UploadGate } from "../attachments/upload-gate.js";
import type { ChannelAdapter, ChannelHooks } from "../channels/channel-adapter.js";
import type { LaneStopsOption } from "../channels/shared/lane-stop-broadcast.js";
import type { CoworkerConfig } from "../config/schema.js";
import type { Logger } from "../logging/logger.js";
import type { ConversationService } from "../sessions/contracts.js";
import type { ChannelContext, ChannelStarter, RunningChannel } from "./app-parts.js";
import type { AppSchedules } from "./app-schedules.js";
import type { AppSubscriptions } from "./app-subscriptions.js";
import { attachmentIntakeFromConfig } from "./attachment-intake.js";
import type { MessengerRegistry } from "./messenger-registry.js";
import { startOrStop } from "./start-or-stop.js";
import type { WakeAccess } from "./wake-access.js";

/** What every adapter is built with, whatever its platform. */
export interface AdapterBase extends Required<ChannelHooks>, LaneStopsOption {
  readonly service: ConversationService;
  readonly logger: Logger;
  /** Where files people send are saved (under `<workspaceRoot>/uploads/`: core/upload-folders.ts). */
  readonly workspaceRoot: string;
  /** Coworker's own files, off limits to what people send (AppContext.serviceFiles). */
  readonly serviceFiles: readonly string[];
  readonly attachments: AttachmentIntake;
  /** Asked before each file people send is downloaded: bytes per person per day, free disk space. */
  readonly uploads: UploadGate;
}

/** A platform's part: whether the config names it, and how the config becomes its adapter. */
export interface AdapterFactory {
  /** The platform name (ThreadTarget.platform) the adapter registers under. */
  readonly platform: string;
  /** Whether the config holds this platform's credentials. */
  hasCredentials(config: CoworkerConfig): boolean;
  /** A new adapter for one connection attempt (throws on a configuration it cannot use). */
  create(context: ChannelContext, base: AdapterBase): Promise<ChannelAdapter>;
}

/** Where the app registers what adapters offer. */
export interface AdapterPorts {
  readonly messengers: MessengerRegistry;
  readonly subscriptions: AppSubscriptions;
  readonly schedules?: AppSchedules;
  /** Where the adapter's access rules go, for the wake-ups of standing items (wake-access.ts). */
  readonly access?: WakeAccess;
}

/** Make `adapter`'s thread outputs the session layer's factory for its platform. */
export function registerOutputs(
  adapter: ChannelAdapter,
  service: Pick<ConversationService, "registerOutput">,
): void {
  service.registerOutput(adapter.platform, (target) => adapter.outputFor(target));
}

/** The adapter's lifecycle as the supervisor and shutdown see it. */
export function runningChannel(adapter: ChannelAdapter): RunningChannel {
  return {
    description: adapter.description,
    connected: () => adapter.health().ready,
    stopIntake: () => adapter.stop(),
    close: () => adapter.stop(),
  };
}

function baseOf(context: ChannelContext, ports: AdapterPorts): AdapterBase {
  const { subscriptions, schedules } = ports;
  return {
    service: context.service,
    logger: context.logger,
    workspaceRoot: context.config.workspace.root,
    serviceFiles: context.serviceFiles,
    attachments: attachmentIntakeFromConfig(
      context.config,
      context.logger,
      context.serviceFiles,
      context.budget,
    ),
    uploads: context.uploads,
    ...(context.coordination.distributed ? { laneStops: context.coordination } : {}),
    observe: subscriptions.channelHooks.observe,
    observeChange: subscriptions.channelHooks.observeChange,
    onBotRemoved: (channel) => {
      subscriptions.channelHooks.onBotRemoved(channel);
      schedules?.channelGone(channel);
    },
  };
}

/**
 * Connect `adapter` once, registering what it offers before and after it starts. A failed start
 * is the adapter's own to undo; an attempt abandoned by `signal` rejects only once the adapter is
 * stopped (start-or-stop.ts).
 */
async function connect(
  adapter: ChannelAdapter,
  context: ChannelContext,
  ports: AdapterPorts,
  signal?: AbortSignal,
): Promise<RunningChannel> {
  const { platform } = adapter;
  registerOutputs(adapter, context.service);
  if (adapter.messenger) ports.messengers.register(platform, adapter.messenger);
  await startOrStop(adapter, signal);
  if (adapter.directory) ports.subscriptions.registerDirectory(adapter.directory());
  if (adapter.mayAct) ports.access?.register(platform, adapter.mayAct.bind(adapter));
  if (adapter.timezoneOf) {
    const timezoneOf = adapter.timezoneOf.bind(adapter);
    ports.schedules?.registerTimezones(platform, (_target, userId) => timezoneOf(userId));
  }
  return runningChannel(adapter);
}

/** The ChannelStarter of the platform `factory` builds adapters for. */
export function channelStarter(factory: AdapterFactory, ports: AdapterPorts): ChannelStarter {
  return {
    platform: factory.platform,
    hasCredentials: (config) => factory.hasCredentials(config),
    start: async (context, signal) =>
      connect(await factory.create(context, baseOf(context, ports)), context, ports, signal),
  };
}
