/**
 * Channel subscriptions as the app wires them: one per assembly, shared by the session layer (the
 * agent's subscription tools, `status` lines, the `subscriptions` / `unsubscribe` commands, idle
 * notices) and the channel starters (every message they see, its edits and deletions, the bot's
 * removal from a channel, and each platform's directory once the bot's identity is known). The
 * SubscriptionService itself opens on the app's store once the SessionManager exists, with wake-ups
 * as wake turns of the subscribing sessions and notices posted through the platforms' thread
 * outputs — and, when the app's coordination is distributed, with the subscriptions shared by every
 * process on it.
 */
import type { Logger } from "pino";
import type { SessionManagerOptions } from "../sessions/session-manager.js";
import type { Coordination } from "../store/coordination/coordination.js";
import type { SlotBudget } from "../store/slot-budget.js";
import type { Store } from "../store/store.js";
import type { CatchUpArgs } from "../subscriptions/catch-up.js";
import type { Caller } from "../core/thread-target.js";
import type { Outcome } from "../subscriptions/channel-access.js";
import type { ChannelHooks } from "../channels/channel-adapter.js";
import type { PlatformDirectory } from "../subscriptions/platform-directory.js";
import {
  sessionWakeSink,
  subscriptionCanceller,
  subscriptionCommands,
  type NotifyingSessions,
} from "../subscriptions/session-wake.js";
import type { Subscription } from "../subscriptions/subscription.js";
import { type Removal, SubscriptionService } from "../subscriptions/subscription-service.js";
import type { SubscribeArgs, SubscriptionOwner } from "../subscriptions/subscription-service-options.js";
import type { SubscriptionSettings } from "../subscriptions/subscription-settings.js";
import {
  createSubscriptionTools,
  type SubscriptionToolsService,
} from "../subscriptions/subscription-tools.js";
import type { AnyTool } from "../core/tool.js";

/** What the subscriptions open on: the store, the session layer and its notices, the settings. */
export interface SubscriptionsOpenOptions {
  readonly store: Store;
  readonly sessions: NotifyingSessions;
  readonly settings: SubscriptionSettings;
  readonly logger: Logger;
  /**
   * The app's coordination: when it is distributed (several processes on one Redis), the
   * subscriptions are shared by the processes on it and each wake-up is claimed once.
   */
  readonly coordination?: Coordination;
  /** Platform-qualified approver ids: they may cancel anyone's subscription (approvals.approvers). */
  readonly approvers: readonly string[];
  /** Where wake-ups per subscription are counted: the app's budget (AppContext.budget). */
  readonly budget: SlotBudget;
}

/** The app's channel subscriptions (see module comment). */
export class AppSubscriptions implements SubscriptionToolsService {
  /** The agent's subscription tools, for every session (engine factory `extraTools`). */
  readonly tools: readonly AnyTool[] = createSubscriptionTools(this);
  private service: SubscriptionService | undefined;
  private readonly directories: PlatformDirectory[] = [];
  private logger: Logger | undefined;

  /**
   * Open the SubscriptionService (once the session layer exists); re-arms pending wake-ups. After
   * `shutdown` it may be opened again (a new run of the same assembly).
   */
  async open(options: SubscriptionsOpenOptions): Promise<void> {
    if (this.service) throw new Error("channel subscriptions are already open");
    const logger = options.logger.child({ component: "subscriptions" });
    this.logger = logger;
    this.service = await SubscriptionService.open({
      store: options.store,
      directories: [...this.directories],
      sink: sessionWakeSink(options.sessions),
      notify: (target, text) => options.sessions.notify(target, text),
      settings: options.settings,
      approvers: options.approvers,
      onError: (error, context) => logger.warn({ err: error }, `subscriptions: ${context}`),
      ...(options.coordination?.distributed ? { shared: { coordination: options.coordination } } : {}),
      wakeBudget: options.budget,
    });
  }

  /**
   * What the SessionManager takes from subscriptions: status lines, idle notices, commands, and
   * the thread's switch to a new session ("new"), which re-points its subscriptions.
   */
  sessionOptions(): Pick<
    SessionManagerOptions,
    "statusExtras" | "onIdle" | "extraCommands" | "itemCancellers" | "onSessionReplaced"
  > {
    return {
      itemCancellers: [subscriptionCanceller(this)],
      statusExtras: async (sessionId) => (await this.service?.listForSession(sessionId)) ?? [],
      onIdle: (sessionId) => this.service?.sessionIdle(sessionId),
      onSessionReplaced: async (oldId, newId) => this.service?.moveSession(oldId, newId),
      extraCommands: subscriptionCommands(this),
    };
  }

  /** The hooks a channel adapter reports to. */
  readonly channelHooks: Required<ChannelHooks> = {
    observe: (message) => this.service?.observe(message),
    observeChange: (change) => this.service?.observeChange(change),
    onBotRemoved: (channel) => {
      const closing = this.service?.onBotRemoved(channel);
      closing?.then(
        (closed) => this.logger?.info({ ...channel, closed }, "bot removed from a channel"),
        (error: unknown) => this.logger?.error({ err: error, ...channel }, "closing subscriptions failed"),
      );
    },
  };

  /** A platform workspace's directory (ChannelAdapter.directory), once its channel knows who the bot is. */
  registerDirectory(directory: PlatformDirectory): void {
    this.directories.push(directory);
    this.service?.registerDirectory(directory);
  }

  subscribe(caller: Caller, args: SubscribeArgs): Promise<Outcome> {
    return this.opened().subscribe(caller, args);
  }

  remove(owner: SubscriptionOwner, channel: string): Promise<Outcome> {
    return this.opened().remove(owner, channel);
  }

  toRemove(owner: SubscriptionOwner, channel: string): Promise<Removal> {
    return this.opened().toRemove(owner, channel);
  }

  listForPerson(person: Pick<SubscriptionOwner, "platform" | "userId">): Promise<readonly Subscription[]> {
    return this.opened().listForPerson(person);
  }

  listFor(sessionId: string): Promise<readonly Subscription[]> {
    return this.opened().listFor(sessionId);
  }

  catchUp(caller: Caller, args: CatchUpArgs): Promise<Outcome> {
    return this.opened().catchUp(caller, args);
  }

  /**
   * Stop wake-up timers and wait for wake-ups being handed over (pending ones survive in the
   * store); forget the directories of this run's channels.
   */
  async shutdown(): Promise<void> {
    const service = this.service;
    this.service = undefined;
    this.directories.length = 0;
    await service?.shutdown();
  }

  private opened(): SubscriptionService {
    if (!this.service)
      throw new Error("channel subscriptions are not available (the service is starting or shutting down)");
    return this.service;
  }
}
