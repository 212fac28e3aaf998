/**
 * One real redis-server for a test file and the stacks a test opens on it: the server starts before
 * the file's tests and stops after them; after each test, `beforeClose` runs (releasing blocked
 * tools, say) and the stacks the test pushed are closed. The hooks are registered where this is
 * called (a file's top level or a describe).
 */
import { afterAll, afterEach, beforeAll } from "vitest";
import { type RedisServer, startRedisServer } from "../../support/redis-server.js";
import { closeRedisStacks, type RedisStack } from "./redis-stack.js";

export interface RedisPerFile {
  /** The server's url (read it inside a test). */
  readonly url: string;
  /** The current test's stacks, closed after it. */
  readonly stacks: RedisStack[];
}

export function redisPerFile(beforeClose: () => void = () => undefined): RedisPerFile {
  let redis: RedisServer | undefined;
  const stacks: RedisStack[] = [];
  beforeAll(async () => {
    redis = await startRedisServer();
  }, 20_000);
  afterEach(async () => {
    beforeClose();
    await closeRedisStacks(stacks.splice(0));
  });
  afterAll(async () => {
    await redis?.stop();
  });
  return {
    get url() {
      if (!redis) throw new Error("no redis-server outside a test");
      return redis.url;
    },
    stacks,
  };
}
