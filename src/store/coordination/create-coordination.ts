/**
 * createCoordination: picks the coordination for a store URL — Redis (its own connections to the
 * store's server) for redis:// and rediss://, the in-process one for everything else (SQLite,
 * Postgres, memory), which is the single-process default.
 */
import type { ErrorSink } from "../backends/backend.js";
import type { Store } from "../store.js";
import { describeStoreTarget, resolveStoreTarget } from "../store-url.js";
import type { Coordination } from "./coordination.js";
import { InProcessCoordination } from "./in-process-coordination.js";

/** What the coordination is chosen from. */
export interface CreateCoordinationOptions {
  /** COWORKER_STORE_URL (unset → SQLite → in-process). */
  readonly url?: string | undefined;
  readonly dataDir: string;
  /** The opened store: the in-process coordination writes fenced writes into it. */
  readonly store: Store;
  /** Background errors (a dropped connection); default: ignored. */
  readonly onError?: ErrorSink;
  /** Warnings (the pub/sub connection reopened after going silent); default: ignored. */
  readonly onWarn?: (message: string) => void;
  /** store_redis_prefix: the same key prefix the store was opened with (Redis only). */
  readonly keyPrefix?: string | undefined;
}

/** Open the coordination matching the store URL. */
export async function createCoordination(options: CreateCoordinationOptions): Promise<Coordination> {
  const target = resolveStoreTarget(options.url, options.dataDir);
  if (target.kind !== "redis") return new InProcessCoordination(options.store);
  const { openRedisCoordination } = await import("./redis-coordination.js");
  return openRedisCoordination(
    target.url,
    describeStoreTarget(target),
    options.onError ?? (() => undefined),
    options.keyPrefix,
    options.onWarn,
  );
}
