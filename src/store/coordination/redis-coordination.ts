/**
 * RedisCoordination: the coordination contract on Redis, shared by every process on one server.
 * Leases are `SET NX PX` plus `INCR` of the key's fence in one script; renew and release compare
 * the token first (Lua); fenced writes check the fence and write the store's own keys (same
 * layout and encoding as the Redis store backend) in one script, so a holder that paused past
 * its lease cannot overwrite its successor. Queues are lists, claims `SET NX PX`, indexes sets.
 * Pub/sub runs on a dedicated subscriber connection, as Redis requires.
 */
import { type ErrorSink, serializeEntry } from "../backends/backend.js";
import { newRedisClient, redisStoreKey } from "../backends/redis.js";
import {
  type Coordination,
  type FencedWrite,
  type FenceRef,
  type LeaseGrant,
  newLeaseToken,
  type Unsubscribe,
} from "./coordination.js";

type RedisClient = ReturnType<typeof newRedisClient>;

/** Every coordination key and channel starts with this, apart from the store's own keys. */
const PREFIX = "coord:";

const ACQUIRE = `if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
return 0`;
const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`;
/** LPOP only while the head is ARGV[1]: 1 when removed. */
const REMOVE_HEAD = `if redis.call('LINDEX', KEYS[1], 0) == ARGV[1] then redis.call('LPOP', KEYS[1]) return 1 end
return 0`;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;
/** KEYS[1] the fence, KEYS[2..] the store keys; ARGV[1] the fence, then per key: op, value, ttl ('' = none). */
const FENCED_WRITE = `if tonumber(redis.call('GET', KEYS[1]) or '0') ~= tonumber(ARGV[1]) then return 0 end
for i = 2, #KEYS do
  local at = (i - 2) * 3 + 2
  if ARGV[at] == 'del' then
    redis.call('DEL', KEYS[i])
  elseif ARGV[at + 2] == '' then
    redis.call('SET', KEYS[i], ARGV[at + 1])
  else
    redis.call('SET', KEYS[i], ARGV[at + 1], 'PX', ARGV[at + 2])
  end
end
return 1`;

const leaseKey = (key: string) => `${PREFIX}lease:${key}`;
const fenceKey = (key: string) => `${PREFIX}fence:${key}`;

/** Connect the command and subscriber connections; throws a clear error (without credentials). */
export async function openRedisCoordination(
  url: string,
  description: string,
  onError: ErrorSink,
): Promise<RedisCoordination> {
  let connected = false;
  const connect = () => newRedisClient(url, onError, () => connected);
  const client = connect();
  const subscriber = connect();
  try {
    await client.connect();
    await subscriber.connect();
    connected = true;
  } catch (error) {
    for (const c of [client, subscriber]) if (c.isOpen) c.destroy();
    throw new Error(
      `cannot connect to Redis for coordination at ${description}: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  return new RedisCoordination(client, subscriber);
}

/** Coordination across processes on one Redis server. */
export class RedisCoordination implements Coordination {
  readonly distributed = true;

  constructor(
    private readonly client: RedisClient,
    private readonly subscriber: RedisClient,
  ) {}

  async acquire(key: string, ttlMs: number, owner?: string): Promise<LeaseGrant | undefined> {
    const token = newLeaseToken(owner);
    const fence = Number(
      await this.client.eval(ACQUIRE, {
        keys: [leaseKey(key), fenceKey(key)],
        arguments: [token, String(ttlMs)],
      }),
    );
    return fence > 0 ? { token, fence } : undefined;
  }

  async renew(key: string, token: string, ttlMs: number): Promise<boolean> {
    const reply = await this.client.eval(RENEW, { keys: [leaseKey(key)], arguments: [token, String(ttlMs)] });
    return Number(reply) === 1;
  }

  async release(key: string, token: string): Promise<boolean> {
    return Number(await this.client.eval(RELEASE, { keys: [leaseKey(key)], arguments: [token] })) === 1;
  }

  async holder(key: string): Promise<string | undefined> {
    return (await this.client.get(leaseKey(key))) ?? undefined;
  }

  async currentFence(key: string): Promise<number> {
    return Number((await this.client.get(fenceKey(key))) ?? 0);
  }

  async fencedWrite(fence: FenceRef, writes: readonly FencedWrite[]): Promise<boolean> {
    const keys = [fenceKey(fence.key)];
    const args = [String(fence.fence)];
    const now = Date.now();
    for (const write of writes) {
      keys.push(redisStoreKey(write.namespace, write.key));
      if (write.op === "delete") args.push("del", "", "");
      else {
        const expires = write.ttlMs === undefined ? undefined : now + write.ttlMs;
        args.push(
          "set",
          serializeEntry({ value: write.value, expires }),
          write.ttlMs === undefined ? "" : String(write.ttlMs),
        );
      }
    }
    return Number(await this.client.eval(FENCED_WRITE, { keys, arguments: args })) === 1;
  }

  push(queue: string, item: string): Promise<number> {
    return this.client.rPush(`${PREFIX}queue:${queue}`, item);
  }

  async peek(queue: string): Promise<string | undefined> {
    return (await this.client.lIndex(`${PREFIX}queue:${queue}`, 0)) ?? undefined;
  }

  async removeHead(queue: string, item: string): Promise<boolean> {
    const keys = [`${PREFIX}queue:${queue}`];
    return Number(await this.client.eval(REMOVE_HEAD, { keys, arguments: [item] })) === 1;
  }

  queueLength(queue: string): Promise<number> {
    return this.client.lLen(`${PREFIX}queue:${queue}`);
  }

  async publish(channel: string, message: string): Promise<void> {
    await this.client.publish(`${PREFIX}${channel}`, message);
  }

  async subscribe(channel: string, listener: (message: string) => void): Promise<Unsubscribe> {
    // Each subscription gets its own wrapper, so one listener subscribed twice is two subscriptions.
    const wrapper = (message: string) => listener(message);
    const name = `${PREFIX}${channel}`;
    await this.subscriber.subscribe(name, wrapper);
    return async () => {
      if (this.subscriber.isOpen) await this.subscriber.unsubscribe(name, wrapper);
    };
  }

  async claimOnce(key: string, ttlMs: number): Promise<boolean> {
    const reply = await this.client.set(`${PREFIX}claim:${key}`, "1", {
      condition: "NX",
      expiration: { type: "PX", value: ttlMs },
    });
    return reply === "OK";
  }

  async addMember(set: string, member: string): Promise<void> {
    await this.client.sAdd(`${PREFIX}set:${set}`, member);
  }

  async removeMember(set: string, member: string): Promise<void> {
    await this.client.sRem(`${PREFIX}set:${set}`, member);
  }

  members(set: string): Promise<readonly string[]> {
    return this.client.sMembers(`${PREFIX}set:${set}`);
  }

  async setField(map: string, field: string, value: string): Promise<void> {
    await this.client.hSet(`${PREFIX}map:${map}`, field, value);
  }

  async deleteField(map: string, field: string): Promise<boolean> {
    return (await this.client.hDel(`${PREFIX}map:${map}`, field)) === 1;
  }

  async fields(map: string): Promise<Readonly<Record<string, string>>> {
    return { ...(await this.client.hGetAll(`${PREFIX}map:${map}`)) };
  }

  async ping(): Promise<boolean> {
    try {
      await this.client.ping();
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    for (const c of [this.subscriber, this.client]) if (c.isOpen) await c.close();
  }
}
