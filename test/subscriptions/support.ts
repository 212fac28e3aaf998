/**
 * Test support for subscriptions: an in-memory platform directory, a recording WakeSink with a
 * switchable busy flag, a harness that opens a SubscriptionService on a store (optionally shared
 * with other processes through a coordination), and a coordination whose announcements can be
 * lost, as over a reconnect.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Caller, ThreadTarget } from "../../src/core/thread-target.js";
import type { Coordination } from "../../src/store/coordination/coordination.js";
import { createStore } from "../../src/store/create-store.js";
import { storeSlotBudget } from "../../src/store/slot-budget.js";
import type { Store } from "../../src/store/store.js";
import type { BufferEntryInput } from "../../src/subscriptions/buffer-entry.js";
import type { Clock } from "../../src/core/clock.js";
import type { ObservedMessage } from "../../src/subscriptions/observed-message.js";
import type {
  HistoryOptions,
  HistoryPage,
  PlatformDirectory,
  ReadAccess,
  ResolveResult,
} from "../../src/subscriptions/platform-directory.js";
import type { Subscription } from "../../src/subscriptions/subscription.js";
import { SubscriptionService } from "../../src/subscriptions/subscription-service.js";
import type { WakeBatch, WakeSink } from "../../src/subscriptions/wake-sink.js";
import {
  DEFAULT_SUBSCRIPTION_SETTINGS,
  type SubscriptionSettings,
} from "../../src/subscriptions/subscription-settings.js";

export interface FakeChannel {
  readonly id: string;
  readonly name: string;
  readonly members: Set<string>;
  access: ReadAccess;
  history: BufferEntryInput[];
}

/** A directory over a map of channels; records every call. */
export class FakeDirectory implements PlatformDirectory {
  readonly platform = "slack";
  readonly workspace = "T1";
  readonly bot = { userId: "UBOT", names: ["coworker"] };
  readonly channels = new Map<string, FakeChannel>();
  /** Stored channel id → the id the platform now says it stands for (canonicalChannel). */
  readonly renamed = new Map<string, string>();
  readonly calls: string[] = [];

  add(id: string, name: string, members: readonly string[]): FakeChannel {
    const channel: FakeChannel = { id, name, members: new Set(members), access: { ok: true }, history: [] };
    this.channels.set(id, channel);
    return channel;
  }

  async resolveChannel(ref: string): Promise<ResolveResult> {
    this.calls.push(`resolve ${ref}`);
    const wanted = ref.replace(/^#/, "");
    const hit = [...this.channels.values()].find((c) => c.id === ref || c.name === wanted);
    return hit
      ? { ok: true, channel: hit.id, name: `#${hit.name}`, broadcast: false }
      : { ok: false, error: `no channel ${ref}` };
  }

  async canonicalChannel(channel: string): Promise<string> {
    this.calls.push(`canonical ${channel}`);
    return this.renamed.get(channel) ?? channel;
  }

  async isMember(channel: string, userId: string): Promise<boolean> {
    this.calls.push(`isMember ${channel} ${userId}`);
    return this.channels.get(channel)?.members.has(userId) ?? false;
  }

  async ensureBotCanRead(channel: string): Promise<ReadAccess> {
    this.calls.push(`ensureBotCanRead ${channel}`);
    return this.channels.get(channel)?.access ?? { ok: false, whatToDo: "no such channel" };
  }

  async history(channel: string, options: HistoryOptions): Promise<HistoryPage> {
    this.calls.push(`history ${channel}`);
    const entries = (this.channels.get(channel)?.history ?? []).filter(
      (e) => options.since === undefined || Date.parse(e.at) >= Date.parse(options.since),
    );
    return { entries: entries.slice(-options.limit) };
  }
}

/** Records wake-ups; `busy` holds the sessions that are running a turn. */
export class RecordingSink implements WakeSink {
  readonly wakes: { subscription: Subscription; batch: WakeBatch }[] = [];
  readonly busy = new Set<string>();
  /** Called at each wake (e.g. to record the time). */
  onWake: (() => void) | undefined;

  async wake(subscription: Subscription, batch: WakeBatch): Promise<void> {
    this.onWake?.();
    this.wakes.push({ subscription, batch });
  }

  isBusy(sessionId: string): boolean {
    return this.busy.has(sessionId);
  }
}

export const HOME: ThreadTarget = {
  platform: "slack",
  workspace: "T1",
  channel: "CHOME",
  thread: "1700000000.000100",
};
export const ALICE: Caller = {
  sessionId: "slack:T1:CHOME:1700000000.000100",
  target: HOME,
  requester: { id: "UALICE", name: "Alice" },
};

let counter = 0;

/** A message in #deploys (CDEPLOY) by Bob, sent "now". */
export function message(text: string, overrides: Partial<ObservedMessage> = {}): ObservedMessage {
  counter += 1;
  return {
    platform: "slack",
    workspace: "T1",
    channel: "CDEPLOY",
    id: `${1_800_000_000 + counter}.000200`,
    author: { id: "UBOB", name: "Bob", isBot: false },
    text,
    at: new Date().toISOString(),
    mentionsBot: false,
    ...overrides,
  };
}

export interface Harness {
  readonly store: Store;
  readonly directory: FakeDirectory;
  readonly sink: RecordingSink;
  readonly notices: { target: ThreadTarget; text: string }[];
  /** How many of the next notices fail to post (the platform refuses them). */
  unpostableNotices: number;
  readonly errors: { error: unknown; context: string }[];
  service: SubscriptionService;
  /** A new service on the same store (a restart). */
  restart(): Promise<SubscriptionService>;
  close(): Promise<void>;
}

/**
 * A service on a memory store (or the given store) with a fake directory holding #deploys,
 * #secret and #home; `shared` makes it one of several processes on that store; `clock` drives its
 * timers (the real clock by default).
 */
export async function openHarness(
  options: {
    store?: Store;
    settings?: Partial<SubscriptionSettings>;
    shared?: { coordination: Coordination; reconcileMs?: number; sweepMs?: number };
    approvers?: readonly string[];
    clock?: Clock;
  } = {},
): Promise<Harness> {
  const store = options.store ?? (await createStore({ url: "memory:", dataDir: os.tmpdir() }));
  const directory = new FakeDirectory();
  directory.add("CDEPLOY", "deploys", ["UALICE", "UBOB"]);
  directory.add("CSECRET", "secret", ["UBOB"]);
  directory.add("CHOME", "home", ["UALICE"]);
  const sink = new RecordingSink();
  const notices: Harness["notices"] = [];
  const errors: Harness["errors"] = [];
  const settings = { ...DEFAULT_SUBSCRIPTION_SETTINGS, ...options.settings };
  const open = () =>
    SubscriptionService.open({
      store,
      directories: [directory],
      sink,
      notify: async (target, text) => {
        if (harness.unpostableNotices > 0) {
          harness.unpostableNotices -= 1;
          throw new Error("the platform refused the notice");
        }
        notices.push({ target, text });
      },
      settings,
      onError: (error, context) => errors.push({ error, context }),
      wakeBudget: storeSlotBudget(store.space("budgets")),
      ...(options.shared ? { shared: options.shared } : {}),
      ...(options.approvers ? { approvers: options.approvers } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
    });
  const harness: Harness = {
    store,
    directory,
    sink,
    notices,
    unpostableNotices: 0,
    errors,
    service: await open(),
    async restart() {
      await harness.service.shutdown();
      harness.service = await open();
      return harness.service;
    },
    async close() {
      await harness.service.shutdown();
      await store.close();
    },
  };
  return harness;
}

/** A temporary data dir, removed by the returned cleanup. */
export async function tempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "coworker-subs-"));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** A coordination whose `publish` does nothing while `losing` is set (announcements lost). */
export interface LossyCoordination {
  readonly coordination: Coordination;
  losing: boolean;
}

/** Wrap `coordination` so its announcements can be lost (see LossyCoordination). */
export function lossy(coordination: Coordination): LossyCoordination {
  const control: LossyCoordination = {
    losing: false,
    coordination: new Proxy(coordination, {
      get(target, property) {
        if (property === "publish" && control.losing) return async () => undefined;
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    }),
  };
  return control;
}
