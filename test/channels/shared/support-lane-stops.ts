/**
 * The set-up of the tests of stops taken by another process (lane-stops-across-slack and
 * lane-stops-across-telegram) and of the lane-stop subscription's failures (the start-retry and
 * broadcast-close tests): one real redis-server and store for the test file, a coordination on
 * them for each process (as two processes each have their own), a workspace whose recordings are
 * transcribed only when the test says so, a coordination whose first subscribe fails, and the
 * clean-up steps a test pushes, run last pushed first after each test.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll } from "vitest";
import type { LaneStopCoordination } from "../../../src/channels/shared/lane-stop-broadcast.js";
import type { Coordination } from "../../../src/store/coordination/coordination.js";
import { createCoordination } from "../../../src/store/coordination/create-coordination.js";
import { createStore } from "../../../src/store/create-store.js";
import type { Store } from "../../../src/store/store.js";
import { type GatedTranscription, gatedTranscription } from "../../support/gated-transcription.js";
import { type RedisServer, startRedisServer } from "../../support/redis-server.js";

export interface ProcessesOnOneRedis {
  /** Steps run after each test, last pushed first. */
  readonly cleanup: (() => Promise<void>)[];
  /** The store every process shares. */
  store(): Store;
  /** A coordination of its own for one process, on the shared redis-server; closed after the test. */
  coordination(): Promise<Coordination>;
  /**
   * A temporary workspace (its folder named from `prefix`) and an intake whose recordings wait
   * for `release`, both removed after the test. The caller pushes `release` on `cleanup` after the
   * channel reading with it, so the recording is let go before that channel stops.
   */
  gatedWorkspace(prefix: string): Promise<{ root: string } & Omit<GatedTranscription, "close">>;
}

/** Call in a describe block: starts the redis-server and store before its tests, stops them after. */
export function processesOnOneRedis(): ProcessesOnOneRedis {
  const cleanup: (() => Promise<void>)[] = [];
  let redis: RedisServer | undefined;
  let store: Store | undefined;

  beforeAll(async () => {
    redis = await startRedisServer();
    store = await createStore({ url: redis.url, dataDir: os.tmpdir() });
  }, 20_000);

  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  afterAll(async () => {
    await store?.close();
    await redis?.stop();
  });

  const started = (): { redis: RedisServer; store: Store } => {
    if (!redis || !store)
      throw new Error("the redis-server is not started: use processesOnOneRedis in a describe block");
    return { redis, store };
  };

  return {
    cleanup,
    store: () => started().store,
    coordination: async () => {
      const { redis, store } = started();
      const coordination = await createCoordination({ url: redis.url, dataDir: os.tmpdir(), store });
      cleanup.push(() => coordination.close());
      return coordination;
    },
    gatedWorkspace: async (prefix) => {
      const root = await mkdtemp(join(os.tmpdir(), prefix));
      cleanup.push(() => rm(root, { recursive: true, force: true }));
      const { attachments, transcribing, release, close } = await gatedTranscription(root);
      cleanup.push(close);
      return { root, attachments, transcribing, release };
    },
  };
}

/** A coordination whose first subscribe fails, and the first message its later subscriptions hear. */
export interface SubscribeFailingOnce {
  /** `on`, its first subscribe rejected with "subscribe failed" (Redis briefly unreachable). */
  readonly coordination: LaneStopCoordination;
  /** Resolves with the first message a listener subscribed through `coordination` is given. */
  readonly firstHeard: Promise<string>;
}

/** The real coordination `on`, its first subscribe failing; what its listeners hear is seen too. */
export function subscribeFailingOnce(on: LaneStopCoordination): SubscribeFailingOnce {
  let failures = 1;
  let heard!: (message: string) => void;
  const firstHeard = new Promise<string>((resolve) => {
    heard = resolve;
  });
  return {
    coordination: {
      publish: (channel, message) => on.publish(channel, message),
      subscribe: (channel, listener) =>
        failures-- > 0
          ? Promise.reject(new Error("subscribe failed"))
          : on.subscribe(channel, (message) => {
              listener(message);
              heard(message);
            }),
    },
    firstHeard,
  };
}
