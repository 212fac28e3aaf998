/**
 * UserDirectory: Slack user ids → display names, whether the person is a guest and whether their
 * account is deactivated (users.info),
 * cached with a TTL so a busy thread costs one lookup per person. A failed lookup falls back to the
 * handle (or id), counts as no guest and not deactivated — a person is refused only where Slack
 * says so — and is not
 * tried again for a short while: a message asks twice (its access check, then its author), and
 * while Slack is rate-limiting or down each ask would be one more call to the failing method.
 */
import type { Logger } from "pino";
import type { PlatformUser } from "../../core/thread-target.js";
import { LruCache } from "../../sessions/lru.js";
import { describeError, type WebClient } from "./slack-api.js";

const TTL_MS = 60 * 60 * 1_000;
/** How long a failed lookup stands before the person is looked up again. */
const FAILURE_TTL_MS = 30 * 1_000;

interface Entry {
  readonly name: string;
  /** A multi- or single-channel guest (users.info is_restricted / is_ultra_restricted). */
  readonly guest: boolean;
  /** The account is deactivated (users.info `deleted`). */
  readonly deactivated: boolean;
  readonly at: number;
}

type Profile = Pick<Entry, "name" | "guest" | "deactivated">;

export class UserDirectory {
  private readonly cache = new LruCache<string, Entry>(10_000);
  private readonly inflight = new Map<string, Promise<Profile>>();
  /** When each person's last lookup failed. */
  private readonly failedAt = new LruCache<string, number>(10_000);

  constructor(
    private readonly client: WebClient,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** The person as a PlatformUser; `fallbackName` (e.g. the handle a payload carried) if the lookup fails. */
  async user(id: string, fallbackName?: string): Promise<PlatformUser> {
    return { id, name: (await this.profile(id, fallbackName ?? id)).name };
  }

  /** Whether Slack says the person is a guest of the workspace (single- or multi-channel). */
  async isGuest(id: string): Promise<boolean> {
    return (await this.profile(id, id)).guest;
  }

  /**
   * Whether Slack says now that the person's account is deactivated: never from the cache but
   * looked up afresh (shared with a lookup under way, none while a failed one stands), which also
   * renews the cached profile, its guest flag included, for checks made long after the person last
   * wrote. A failed lookup counts as not deactivated, as it counts as no guest.
   */
  async isDeactivatedNow(id: string): Promise<boolean> {
    return (await this.profile(id, id, 0)).deactivated;
  }

  /**
   * The person's profile: cached for up to `maxAgeMs`, else looked up — one lookup at a time per
   * person, and none while a failed one stands (FAILURE_TTL_MS).
   */
  private async profile(id: string, fallback: string, maxAgeMs = TTL_MS): Promise<Profile> {
    const hit = this.cache.get(id);
    if (hit && this.now() - hit.at < maxAgeMs) return hit;
    const failed = this.failedAt.get(id);
    if (failed !== undefined && this.now() - failed < FAILURE_TTL_MS) return unknown(fallback);
    const pending = this.inflight.get(id);
    if (pending) return pending;
    const lookup = this.lookup(id, fallback).finally(() => this.inflight.delete(id));
    this.inflight.set(id, lookup);
    return lookup;
  }

  private async lookup(id: string, fallback: string): Promise<Profile> {
    try {
      const result = await this.client.users.info({ user: id });
      const user = result.user;
      const name = user?.profile?.display_name || user?.real_name || user?.name || id;
      const guest = user?.is_restricted === true || user?.is_ultra_restricted === true;
      const entry = { name, guest, deactivated: user?.deleted === true, at: this.now() };
      this.cache.set(id, entry);
      this.failedAt.delete(id);
      return entry;
    } catch (error) {
      this.logger.debug({ err: describeError(error), user: id }, "slack users.info failed");
      this.failedAt.set(id, this.now());
      return unknown(fallback);
    }
  }
}

/** What a failed lookup stands for: the fallback name, no guest, not deactivated. */
function unknown(name: string): Profile {
  return { name, guest: false, deactivated: false };
}
