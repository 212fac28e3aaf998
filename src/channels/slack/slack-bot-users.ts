/**
 * Slack bot users: the bot user id (U…) behind a bot id (B…), from bots.info, cached. A post by an
 * allowed bot names it by its bot id, but conversations.members lists user ids, so whether such a
 * bot is still in a channel (a wake-up of its scheduled task or subscription there) is asked for
 * its bot user. The mapping never changes, so an answer is kept (in a bounded cache); a failed
 * lookup is not, and rejects, for the caller to take as "cannot tell now". A bot with no bot user
 * (a legacy integration, an incoming webhook) answers undefined: it is a member of no conversation.
 */
import { LruCache } from "../../core/lru-cache.js";
import type { WebClient } from "./slack-api.js";

/** The bot user id of a bot id, looked up once. */
export function slackBotUsers(client: WebClient): (botId: string) => Promise<string | undefined> {
  const cache = new LruCache<string, { readonly userId: string | undefined }>(1_000);
  return async (botId) => {
    const hit = cache.get(botId);
    if (hit) return hit.userId;
    const result = await client.bots.info({ bot: botId });
    const userId =
      typeof result.bot?.user_id === "string" && result.bot.user_id !== "" ? result.bot.user_id : undefined;
    cache.set(botId, { userId });
    return userId;
  };
}
