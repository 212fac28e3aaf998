/**
 * Test support: a redis-server for one test file (started before its tests, stopped after them)
 * and, on demand, a StallingProxy in front of it, closed with it: the set-up the stalled-link tests
 * share.
 */
import { afterAll, beforeAll } from "vitest";
import { type RedisServer, startRedisServer } from "./redis-server.js";
import { StallingProxy } from "./stalling-proxy.js";

/** The file's server, and a proxy to it that the test can stall. */
export interface StallableRedis {
  /** The redis-server itself (for clients that talk to it directly). */
  server(): RedisServer;
  /** A listening proxy to the server, and the URL a client connects to through it. */
  proxied(): Promise<{ readonly proxy: StallingProxy; readonly url: string }>;
}

/** Register the file's redis-server and proxies (call at the top level of a test file). */
export function stallableRedis(): StallableRedis {
  let redis: RedisServer | undefined;
  const proxies: StallingProxy[] = [];
  beforeAll(async () => {
    redis = await startRedisServer();
  }, 20_000);
  afterAll(async () => {
    for (const proxy of proxies) await proxy.close();
    await redis?.stop();
  });
  const server = () => {
    if (!redis) throw new Error("stallableRedis: the server starts in beforeAll");
    return redis;
  };
  return {
    server,
    async proxied() {
      const proxy = new StallingProxy(server().port);
      proxies.push(proxy);
      return { proxy, url: await proxy.listen() };
    },
  };
}
