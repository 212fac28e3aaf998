/**
 * UserDirectory: Slack user ids → display names (users.info), cached with a TTL so a busy
 * thread costs one lookup per person. A failed lookup falls back to the handle (or id) and is
 * not cached.
 */
import type { Logger } from "pino";
import type { PlatformUser } from "../../core/thread-target.js";
import { LruCache } from "../../sessions/lru.js";
import { describeError, type WebClient } from "./slack-api.js";

const TTL_MS = 60 * 60 * 1_000;

interface Entry {
  readonly name: string;
  readonly at: number;
}

export class UserDirectory {
  private readonly cache = new LruCache<string, Entry>(10_000);
  private readonly inflight = new Map<string, Promise<string>>();

  constructor(
    private readonly client: WebClient,
    private readonly logger: Logger,
  ) {}

  /** The person as a PlatformUser; `fallbackName` (e.g. the handle a payload carried) if the lookup fails. */
  async user(id: string, fallbackName?: string): Promise<PlatformUser> {
    return { id, name: await this.name(id, fallbackName ?? id) };
  }

  private async name(id: string, fallback: string): Promise<string> {
    const hit = this.cache.get(id);
    if (hit && Date.now() - hit.at < TTL_MS) return hit.name;
    const pending = this.inflight.get(id);
    if (pending) return pending;
    const lookup = this.lookup(id, fallback).finally(() => this.inflight.delete(id));
    this.inflight.set(id, lookup);
    return lookup;
  }

  private async lookup(id: string, fallback: string): Promise<string> {
    try {
      const result = await this.client.users.info({ user: id });
      const user = result.user;
      const name = user?.profile?.display_name || user?.real_name || user?.name || id;
      this.cache.set(id, { name, at: Date.now() });
      return name;
    } catch (error) {
      this.logger.debug({ err: describeError(error), user: id }, "slack users.info failed");
      return fallback;
    }
  }
}
