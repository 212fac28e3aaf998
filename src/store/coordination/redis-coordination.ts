/**
 * RedisCoordination: the coordination contract on Redis, shared by every process on one server.
 * Leases are `SET NX PX` plus `INCR` of the key's fence in one script; renew and release compare
 * the token first (Lua); fenced writes check the fence and write the store's own keys (same
 * layout and encoding as the Redis store backend), trim queues or remove one of their items, and
 * keep index sets in one script, so a holder that paused past its lease cannot overwrite its
 * successor. An offer (claims, index, queue append and lease) is one script too. Queues are
 * lists, claims written only when free (redis-live-entry.ts), indexes sets. Pub/sub runs on a dedicated subscriber connection, as
 * Redis requires, watched by a heartbeat of its own (subscriber-watch.ts). A deployment with a key prefix has every key and channel under `<prefix>:`.
 * Every call's input is checked whole before its script runs (coordination-input.ts): a script
 * whose command fails midway keeps the writes made before it. The scripts themselves are in
 * redis-coordination-scripts.ts.
 */
import { type ErrorSink, pingHealth, serializeValue } from "../backends/backend.js";
import { INSERT_IF_ABSENT_LUA } from "../backends/redis-live-entry.js";
import {
  closeRedisClient,
  newRedisClient,
  type RedisClient,
  type RedisKeyspace,
  redisKeyspace,
  redisStoreKey,
  watchRedisLink,
} from "../backends/redis.js";
import {
  type Coordination,
  type FencedWrite,
  type FenceRef,
  type LeaseGrant,
  newLeaseToken,
  type Offer,
  type OfferOutcome,
  type StoreWrite,
  type Unsubscribe,
} from "./coordination.js";
import { checkFencedWrites, checkLeaseTtl, checkOffer, checkStoreWrites } from "./coordination-input.js";
import {
  ACQUIRE,
  FENCED_WRITE,
  OFFER,
  RELEASE,
  RELEASE_AND_COUNT,
  RENEW,
  UNLEASED_MEMBERS,
} from "./redis-coordination-scripts.js";
import { heartbeatChannel, SubscriberWatch } from "./subscriber-watch.js";
import type { StoreHealth, StoreNamespace } from "../store.js";

/** Every coordination key and channel starts with this (after the deployment's prefix), apart from the store's own keys. */
const PREFIX = "coord:";

/** A store value as the store's keyv reads it, and its TTL argument ('' = none). */
function storeValue(write: StoreWrite, now: number): [string, string] {
  return [
    serializeValue(write.value, write.ttlMs, now),
    write.ttlMs === undefined ? "" : String(write.ttlMs),
  ];
}

/**
 * Connect the command and subscriber connections; throws a clear error (without credentials).
 * `keyPrefix` puts every key and channel under `<keyPrefix>:` (the store's must be the same).
 * Both connections are watched for a link gone silent: the command one by watchRedisLink, the
 * subscriber by its heartbeat (SubscriberWatch), which says so through `onWarn` once per outage.
 */
export async function openRedisCoordination(
  url: string,
  description: string,
  onError: ErrorSink,
  keyPrefix?: string,
  onWarn: (message: string) => void = () => undefined,
): Promise<RedisCoordination> {
  const keyspace = redisKeyspace(keyPrefix);
  let connected = false;
  const command = newRedisClient(url, onError, () => connected);
  const { client } = command;
  const subscription = newRedisClient(url, onError, () => connected);
  const subscriber = subscription.client;
  const subscriberWatch = new SubscriberWatch(
    client,
    subscription,
    heartbeatChannel(`${keyspace.head}${PREFIX}`),
    onWarn,
  );
  try {
    await client.connect();
    await subscriber.connect();
    await subscriberWatch.start();
    connected = true;
  } catch (error) {
    subscriberWatch.stop();
    for (const c of [client, subscriber]) if (c.isOpen) c.destroy();
    throw new Error(
      `cannot connect to Redis for coordination at ${description}: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  const stopWatchingClient = watchRedisLink(command, onError);
  const stopWatching = () => {
    stopWatchingClient();
    subscriberWatch.stop();
  };
  return new RedisCoordination(client, subscriber, keyspace, stopWatching);
}

/** Coordination across processes on one Redis server. */
export class RedisCoordination implements Coordination {
  readonly distributed = true;

  /** Every coordination key and channel name starts with this. */
  private readonly head: string;

  constructor(
    private readonly client: RedisClient,
    private readonly subscriber: RedisClient,
    private readonly keyspace: RedisKeyspace = redisKeyspace(),
    /** Stops the watches on the connections (see watchRedisLink, SubscriberWatch). */
    private readonly stopWatching: () => void = () => undefined,
  ) {
    this.head = `${keyspace.head}${PREFIX}`;
  }

  private leaseKey(key: string): string {
    return `${this.head}lease:${key}`;
  }

  private fenceKey(key: string): string {
    return `${this.head}fence:${key}`;
  }

  private queueKey(queue: string): string {
    return `${this.head}queue:${queue}`;
  }

  private setKey(set: string): string {
    return `${this.head}set:${set}`;
  }

  private mapKey(map: string): string {
    return `${this.head}map:${map}`;
  }

  private storeKey(write: { readonly namespace: StoreNamespace; readonly key: string }): string {
    return redisStoreKey(this.keyspace, write.namespace, write.key);
  }

  async acquire(key: string, ttlMs: number, owner?: string): Promise<LeaseGrant | undefined> {
    checkLeaseTtl(key, ttlMs);
    const token = newLeaseToken(owner);
    const fence = Number(
      await this.client.eval(ACQUIRE, {
        keys: [this.leaseKey(key), this.fenceKey(key)],
        arguments: [token, String(ttlMs)],
      }),
    );
    return fence > 0 ? { token, fence } : undefined;
  }

  async renew(key: string, token: string, ttlMs: number): Promise<boolean> {
    checkLeaseTtl(key, ttlMs);
    const reply = await this.client.eval(RENEW, {
      keys: [this.leaseKey(key)],
      arguments: [token, String(ttlMs)],
    });
    return Number(reply) === 1;
  }

  async release(key: string, token: string): Promise<boolean> {
    return Number(await this.client.eval(RELEASE, { keys: [this.leaseKey(key)], arguments: [token] })) === 1;
  }

  async holder(key: string): Promise<string | undefined> {
    return (await this.client.get(this.leaseKey(key))) ?? undefined;
  }

  async currentFence(key: string): Promise<number> {
    return Number((await this.client.get(this.fenceKey(key))) ?? 0);
  }

  async fencedWrite(fence: FenceRef, writes: readonly FencedWrite[]): Promise<boolean> {
    checkFencedWrites(writes);
    const keys = [this.fenceKey(fence.key)];
    const args = [String(fence.fence)];
    const now = Date.now();
    for (const write of writes) {
      switch (write.op) {
        case "set":
          keys.push(this.storeKey(write));
          args.push("set", ...storeValue(write, now));
          break;
        case "delete":
          keys.push(this.storeKey(write));
          args.push("del", "", "");
          break;
        case "trim":
          keys.push(this.queueKey(write.queue));
          args.push("trim", String(write.count), "");
          break;
        case "remove-item":
          keys.push(this.queueKey(write.queue));
          args.push("lrem", write.item, "");
          break;
        case "add-member":
        case "remove-member":
          keys.push(this.setKey(write.set));
          args.push(write.op === "add-member" ? "sadd" : "srem", write.member, "");
          break;
      }
    }
    return Number(await this.client.eval(FENCED_WRITE, { keys, arguments: args })) === 1;
  }

  async insertIfAbsent(first: StoreWrite, rest: readonly StoreWrite[]): Promise<boolean> {
    const writes = [first, ...rest];
    checkStoreWrites(writes);
    const now = Date.now();
    const reply = await this.client.eval(INSERT_IF_ABSENT_LUA, {
      keys: writes.map((write) => this.storeKey(write)),
      arguments: [...writes.flatMap((write) => storeValue(write, now)), String(now)],
    });
    return Number(reply) === 1;
  }

  async offer(offer: Offer): Promise<OfferOutcome> {
    checkOffer(offer);
    const token = newLeaseToken(offer.lease.owner);
    const now = Date.now();
    const reply = (await this.client.eval(OFFER, {
      keys: [
        this.queueKey(offer.queue),
        this.setKey(offer.index.set),
        this.leaseKey(offer.lease.key),
        this.fenceKey(offer.lease.key),
        ...offer.claims.map((claim) => this.storeKey(claim)),
      ],
      arguments: [
        offer.item,
        offer.index.member,
        token,
        String(offer.lease.ttlMs),
        ...offer.claims.flatMap((claim) => storeValue(claim, now)),
        String(now),
      ],
    })) as Array<number | string | null>;
    const [status, ...rest] = reply;
    if (status === 0) return { status: "duplicate" };
    if (status === 1) {
      const [fence, ...items] = rest;
      return { status: "taken", grant: { token, fence: Number(fence) }, items: items.map(String) };
    }
    return { status: "queued", holder: typeof rest[0] === "string" ? rest[0] : undefined };
  }

  async items(queue: string, from: number): Promise<readonly string[]> {
    return this.client.lRange(this.queueKey(queue), from, -1);
  }

  async releaseAndCount(
    key: string,
    token: string,
    queue: string,
  ): Promise<{ released: boolean; waiting: number }> {
    const reply = Number(
      await this.client.eval(RELEASE_AND_COUNT, {
        keys: [this.leaseKey(key), this.queueKey(queue)],
        arguments: [token],
      }),
    );
    return reply < 0 ? { released: false, waiting: -1 } : { released: true, waiting: reply };
  }

  async publish(channel: string, message: string): Promise<boolean> {
    return (await this.client.publish(`${this.head}${channel}`, message)) > 0;
  }

  async subscribe(channel: string, listener: (message: string) => void): Promise<Unsubscribe> {
    // Each subscription gets its own wrapper, so one listener subscribed twice is two subscriptions.
    const wrapper = (message: string) => listener(message);
    const name = `${this.head}${channel}`;
    await this.subscriber.subscribe(name, wrapper);
    return async () => {
      if (this.subscriber.isOpen) await this.subscriber.unsubscribe(name, wrapper);
    };
  }

  async claimOnce(key: string, ttlMs: number): Promise<boolean> {
    checkLeaseTtl(key, ttlMs);
    const reply = await this.client.set(`${this.head}claim:${key}`, "1", {
      condition: "NX",
      expiration: { type: "PX", value: ttlMs },
    });
    return reply === "OK";
  }

  async addMember(set: string, member: string): Promise<void> {
    await this.client.sAdd(this.setKey(set), member);
  }

  async removeMember(set: string, member: string): Promise<void> {
    await this.client.sRem(this.setKey(set), member);
  }

  members(set: string): Promise<readonly string[]> {
    return this.client.sMembers(this.setKey(set));
  }

  async unleasedMembers(set: string, leasePrefix: string): Promise<readonly string[]> {
    // The lease keys are built inside the script from the members; with one Redis (no cluster) a
    // script may touch keys it was not handed.
    const reply = await this.client.eval(UNLEASED_MEMBERS, {
      keys: [this.setKey(set)],
      arguments: [this.leaseKey(leasePrefix)],
    });
    return (reply as string[]).map(String);
  }

  async setField(map: string, field: string, value: string): Promise<void> {
    await this.client.hSet(this.mapKey(map), field, value);
  }

  async deleteField(map: string, field: string): Promise<boolean> {
    return (await this.client.hDel(this.mapKey(map), field)) === 1;
  }

  async fields(map: string): Promise<Readonly<Record<string, string>>> {
    return { ...(await this.client.hGetAll(this.mapKey(map))) };
  }

  /**
   * Not ok, with the reason, when Redis fails the PING or does not answer within PING_TIMEOUT_MS
   * (a stalled link answers nothing).
   */
  ping(): Promise<StoreHealth> {
    return pingHealth(this.client.ping());
  }

  async close(): Promise<void> {
    this.stopWatching();
    for (const c of [this.subscriber, this.client]) await closeRedisClient(c);
  }
}
