/**
 * Set-up the channel buffer tests have in common: messages with fresh ids, a clock the test
 * moves by hand, and (for shared buffers) a real redis-server with the stores opened on it (each
 * one "process") and a raw client on it for looking at keys and their TTLs directly.
 */
import os from "node:os";
import { createClient } from "@keyv/redis";
import type { Clock } from "../../src/core/clock.js";
import { createStore } from "../../src/store/create-store.js";
import type { KeyValueSpace, Store } from "../../src/store/store.js";
import type { BufferEntryInput } from "../../src/subscriptions/buffer-entry.js";
import { type RedisServer, startRedisServer } from "../support/redis-server.js";

/** A clock at `start` that the test moves by setting `time`; its timers fire at once. */
export function manualClock(start: number): Clock & { time: number } {
  return {
    time: start,
    now() {
      return this.time;
    },
    setTimer: (callback) => queueMicrotask(callback),
    clearTimer: () => undefined,
  };
}

let counter = 0;

/** A message by Bob with a fresh id, sent at `at` (now by default). */
export function bufferInput(text: string, at: number = Date.now()): BufferEntryInput {
  counter += 1;
  return {
    id: `${1_800_000_000 + counter}.000100`,
    author: { id: "UBOB", name: "Bob", isBot: false },
    text,
    at: new Date(at).toISOString(),
  };
}

/** A raw client on the server. */
type RawClient = ReturnType<typeof createClient>;

/** A redis-server for one test, the stores opened on it, and a raw client on it. */
export class BufferServer {
  private readonly stores: Store[] = [];

  private constructor(
    private readonly redis: RedisServer,
    readonly raw: RawClient,
  ) {}

  static async start(): Promise<BufferServer> {
    const redis = await startRedisServer();
    const raw: RawClient = createClient({ url: redis.url });
    await raw.connect();
    return new BufferServer(redis, raw);
  }

  /** The "buffers" space of a new store on the server: one more process. */
  async openSpace(): Promise<KeyValueSpace> {
    const store = await createStore({ url: this.redis.url, dataDir: os.tmpdir() });
    this.stores.push(store);
    return store.space("buffers");
  }

  async stop(): Promise<void> {
    if (this.raw.isOpen) await this.raw.close();
    for (const store of this.stores) await store.close();
    await this.redis.stop();
  }
}
