/**
 * Slack timezones: a person's IANA timezone from users.info (`user.tz`), cached per person for
 * an hour, for scheduled tasks whose caller names none. A failed lookup answers undefined (the
 * configured default applies) and is not cached.
 */
import { LruCache } from "../../core/lru-cache.js";
import type { WebClient } from "./slack-api.js";

const TTL_MS = 60 * 60 * 1_000;

/** A lookup of a Slack user's timezone by id. */
export function slackTimezones(client: WebClient): (userId: string) => Promise<string | undefined> {
  const cache = new LruCache<string, { readonly tz: string | undefined; readonly at: number }>(10_000);
  return async (userId) => {
    const hit = cache.get(userId);
    if (hit && Date.now() - hit.at < TTL_MS) return hit.tz;
    try {
      const result = await client.users.info({ user: userId });
      const tz = typeof result.user?.tz === "string" && result.user.tz !== "" ? result.user.tz : undefined;
      cache.set(userId, { tz, at: Date.now() });
      return tz;
    } catch {
      return undefined;
    }
  };
}
