/**
 * Whether a person may still act in a Slack conversation when no message of theirs is at hand —
 * a scheduled task or a subscription of theirs waking a turn (ChannelAdapter.mayAct): the allowed
 * users and channels, guests (per `allowGuests`), no deactivated account, and — in a channel,
 * private channel or group DM — still a member of it (their own DM with the bot needs no membership
 * check). The answer is false only on a definite "no"; when Slack cannot say (an API error, or a
 * failed users.info lookup that leaves deactivation or guest status unknown) it rejects, which the
 * wake-up gate takes as a wake that cannot be taken now — not as a refusal that would pause the
 * person's task or close their subscription. A bot id (B…, an allowed bot's) has no account
 * users.info could look up, so it gets no deactivation check; it must still be in allowed_bots, and
 * in a conversation its bot user (bots.info, slack-bot-users.ts) must be a member, since
 * conversations.members lists user ids only.
 */
import type { ThreadTarget } from "../../core/thread-target.js";
import { type AccessPolicy, isBotId } from "./slack-access.js";
import { kindOf } from "./slack-conversation-kind.js";
import type { SlackDirectory } from "./slack-directory.js";
import type { UserDirectory } from "./slack-users.js";

/** What the check asks: the people, the access rules and the conversations' members. */
export interface MayActDeps {
  readonly users: UserDirectory;
  readonly access: AccessPolicy;
  readonly directory: () => SlackDirectory;
  /** The bot user id behind a bot id (undefined: it has none); rejects when Slack cannot say. */
  readonly botUser: (botId: string) => Promise<string | undefined>;
}

/** Whether `userId` may act in `target`'s conversation now (see the module comment). */
export async function mayActInSlack(
  deps: MayActDeps,
  userId: string,
  target: ThreadTarget,
): Promise<boolean> {
  // Looked up afresh first: the guest check then reads the renewed profile, not one cached
  // when the person last wrote.
  if (!isBotId(userId)) {
    const deactivated = await deps.users.isDeactivatedNow(userId);
    if (deactivated === undefined) throw unconfirmedError("deactivated");
    if (deactivated) return false;
  }
  const kind = kindOf(target);
  const access = await deps.access.check(userId, target.channel, kind);
  if (!access.allowed) {
    if (access.unconfirmed) throw unconfirmedError("guest");
    return false;
  }
  if (kind === "dm") return true;
  const member = isBotId(userId) ? await deps.botUser(userId) : userId;
  return member !== undefined && deps.directory().isMember(target.channel, member);
}

/** The rejection when users.info could not say whether the person is deactivated or a guest. */
function unconfirmedError(what: "deactivated" | "guest"): Error {
  return new Error(
    `Slack could not confirm whether the person is ${what === "guest" ? "a guest" : "deactivated"} (users.info failed); try again later`,
  );
}
