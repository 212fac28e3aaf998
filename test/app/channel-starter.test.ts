/** channelStarter: every ChannelAdapter is registered, started, supervised and stopped one way. */
import { describe, expect, it } from "vitest";
import type { ChannelContext } from "../../src/app/app-parts.js";
import type { AppSchedules } from "../../src/app/app-schedules.js";
import { AppSubscriptions } from "../../src/app/app-subscriptions.js";
import { type AdapterFactory, channelStarter } from "../../src/app/channel-starter.js";
import { MessengerRegistry } from "../../src/app/messenger-registry.js";
import type { ChannelAdapter, ChannelHealth, RemovedChannel } from "../../src/channels/channel-adapter.js";
import { loadConfig } from "../../src/config/load-config.js";
import type { ThreadOutput } from "../../src/core/thread-output.js";
import type { ThreadTarget } from "../../src/core/thread-target.js";
import { createLogger } from "../../src/logging/logger.js";
import type { PlatformDirectory } from "../../src/subscriptions/platform-directory.js";
import type { Messenger } from "../../src/tools/messaging/messenger.js";
import { FakeService } from "../channels/slack/fake-service.js";

const TARGET: ThreadTarget = { platform: "fake", workspace: "w1", channel: "c1" };

/** An adapter that records its lifecycle and what it was asked for. */
class FakeAdapter implements ChannelAdapter {
  readonly platform = "fake";
  readonly description = "fake (test)";
  readonly steps: string[] = [];
  readonly output = {} as ThreadOutput;
  readonly messenger = {} as Messenger;
  readonly place = { platform: "fake", workspace: "w1" } as PlatformDirectory;
  state: ChannelHealth = { ready: false, state: "stopped" };
  failStart = false;

  /** Like every adapter, a start that fails undoes what it began (the starter stops nothing then). */
  async start(): Promise<void> {
    this.steps.push("start");
    if (this.failStart) {
      await this.stop();
      throw new Error("no connection");
    }
    this.state = { ready: true, state: "connected" };
  }

  async stop(): Promise<void> {
    this.steps.push("stop");
    this.state = { ready: false, state: "stopped" };
  }

  health(): ChannelHealth {
    return this.state;
  }

  outputFor(target: ThreadTarget): ThreadOutput {
    this.steps.push(`output ${target.channel}`);
    return this.output;
  }

  directory(): PlatformDirectory {
    this.steps.push("directory");
    return this.place;
  }

  async timezoneOf(userId: string): Promise<string | undefined> {
    return `tz of ${userId}`;
  }
}

/** The app's upload gate, handed on as is. */
const UPLOADS = { admit: async () => ({ ok: false as const, reason: "test" }) };

/** A coordination as the starter sees it: only whether several processes share it. */
const coordinationOf = (distributed: boolean) => ({ distributed });

function setup(adapter: FakeAdapter, coordination = coordinationOf(false)) {
  const loaded = loadConfig({ env: { OPENAI_API_KEY: "sk-test-0123456789abcdef" }, cwd: "/tmp" });
  if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
  const service = new FakeService();
  /** The store spaces the starter asked for (none: the intake counts in the app's budget). */
  const spaces: string[] = [];
  const context = {
    config: loaded.config,
    logger: createLogger({ level: "silent" }),
    service,
    store: {
      space: (namespace: string) => {
        spaces.push(namespace);
        return {};
      },
    },
    budget: { take: async () => ({ ok: false, freesAt: undefined }) },
    uploads: UPLOADS,
    coordination,
  } as unknown as ChannelContext;
  const messengers = new MessengerRegistry();
  const subscriptions = new AppSubscriptions();
  const registered: string[] = [];
  const timezones = new Map<string, (target: ThreadTarget, userId: string) => Promise<string | undefined>>();
  const gone: RemovedChannel[] = [];
  const schedules = {
    registerTimezones: (
      platform: string,
      lookup: (target: ThreadTarget, userId: string) => Promise<string | undefined>,
    ) => {
      timezones.set(platform, lookup);
    },
    channelGone: (channel: RemovedChannel) => gone.push(channel),
  } as unknown as AppSchedules;
  const originalRegister = subscriptions.registerDirectory.bind(subscriptions);
  subscriptions.registerDirectory = (directory) => {
    registered.push(`${directory.platform}:${directory.workspace}`);
    originalRegister(directory);
  };
  let removed: ((channel: RemovedChannel) => void) | undefined;
  let laneStops: unknown;
  const factory: AdapterFactory = {
    platform: "fake",
    hasCredentials: () => true,
    create: async (_context, base) => {
      removed = base.onBotRemoved;
      laneStops = base.laneStops;
      expect(base.workspaceRoot).toBe(loaded.config.workspace.root);
      expect(base.service).toBe(service);
      // The intake counts transcriptions in the app's one budget (AppContext.budget): no new one per connection.
      expect(spaces).toEqual([]);
      // So does the upload gate (AppContext.uploads): every reconnect shares it.
      expect(base.uploads).toBe(UPLOADS);
      return adapter;
    },
  };
  const starter = channelStarter(factory, { messengers, subscriptions, schedules });
  return {
    starter,
    context,
    service,
    messengers,
    registered,
    timezones,
    gone,
    removed: (channel: RemovedChannel) => removed?.(channel),
    laneStops: () => laneStops,
  };
}

describe("channelStarter", () => {
  it("registers output and messenger before start, directory and timezones after, and runs the adapter's lifecycle", async () => {
    const adapter = new FakeAdapter();
    const s = setup(adapter);
    expect(s.starter.platform).toBe("fake");
    const running = await s.starter.start(s.context);
    expect(running.description).toBe("fake (test)");
    expect(s.service.factories.get("fake")?.(TARGET)).toBe(adapter.output);
    expect(s.messengers.messengerFor("fake")).toBe(adapter.messenger);
    expect(s.registered).toEqual(["fake:w1"]);
    expect(await s.timezones.get("fake")?.(TARGET, "U1")).toBe("tz of U1");
    expect(adapter.steps).toEqual(["start", "directory", "output c1"]);
    expect(await running.connected()).toBe(true);
    s.removed({ platform: "fake", workspace: "w1", channel: "c9" });
    expect(s.gone).toEqual([{ platform: "fake", workspace: "w1", channel: "c9" }]);
    await running.stopIntake();
    expect(await running.connected()).toBe(false);
    expect(adapter.steps.at(-1)).toBe("stop");
  });

  it("leaves an adapter whose start fails stopped once, by itself, and registers no directory for it", async () => {
    const adapter = new FakeAdapter();
    adapter.failStart = true;
    const s = setup(adapter);
    await expect(s.starter.start(s.context)).rejects.toThrow("no connection");
    expect(adapter.steps).toEqual(["start", "stop"]);
    expect(s.registered).toEqual([]);
    expect(s.messengers.messengerFor("fake")).toBe(adapter.messenger);
  });

  it("gives every adapter the coordination to announce stops on only when several processes share it", async () => {
    const shared = coordinationOf(true);
    const onShared = setup(new FakeAdapter(), shared);
    await onShared.starter.start(onShared.context);
    const alone = setup(new FakeAdapter());
    await alone.starter.start(alone.context);

    expect(onShared.laneStops()).toBe(shared);
    expect(alone.laneStops()).toBeUndefined();
  });
});
