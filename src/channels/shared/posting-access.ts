/**
 * Whether a message may be posted to a channel other than the sender's own conversation: only
 * when the person asking may post there, found and checked as subscriptions and catch_up do it
 * (accessChannel) but with the directory's posting test where it has one (a muted member, or a
 * mere subscriber of a broadcast channel, reads but does not post), so the bot never becomes a
 * way to post where that person cannot — a stranger in a shared channel asking for a post to a
 * private one they are not in. Every refusal reads the same, whether the channel does not exist,
 * is private and the person is not in it, or could not be checked: the answer must not tell
 * anyone that a private channel exists. The real reason comes back separately, for the log.
 */
import { accessChannel, DirectoryLookup } from "../../subscriptions/channel-access.js";
import {
  failureText,
  type PlatformDirectory,
  type ResolvedChannel,
} from "../../subscriptions/platform-directory.js";
import type { ChannelRef } from "../../subscriptions/subscription.js";
import type { Caller } from "../../core/thread-target.js";

/** A directory that may know more about posting than membership. */
export interface PostingDirectory extends PlatformDirectory {
  /**
   * Whether the person may post in the channel, where that takes more than being a member.
   * Throws when the platform cannot say. Without it, every member may post.
   */
  mayPost?(channel: ResolvedChannel, userId: string): Promise<boolean>;
}

export type PostingAccess =
  | { readonly ok: true; readonly ref: ChannelRef }
  | {
      readonly ok: false;
      /** For the model: the same words whatever the reason. */
      readonly error: string;
      /** For the log: why. */
      readonly reason: string;
    };

/**
 * Resolve `channel` with the platform's directory and check that `sender.requester` may post in
 * it (is a member of it, when the directory has no posting test). `directory` is asked for at
 * each call (a channel knows its own only once connected; one that throws is a refusal too).
 */
export async function postingAccess(
  directory: () => PostingDirectory,
  sender: Caller,
  channel: string,
): Promise<PostingAccess> {
  let reason: string;
  try {
    const found = directory();
    // Without a posting test of its own, accessChannel checks membership.
    const access = await accessChannel(
      new DirectoryLookup([found]),
      sender,
      channel,
      found.mayPost?.bind(found),
    );
    if (access.ok) return { ok: true, ref: access.ref };
    reason = access.message;
  } catch (error) {
    reason = failureText(error);
  }
  const who = sender.requester.name || sender.requester.id;
  return {
    ok: false,
    error: `Nothing was sent to ${channel}: besides this conversation, I post only to channels that ${who} is a member of and I am in, and I could not confirm that ${channel} is one. Check its name or id, or ask ${who} to join it first.`,
    reason,
  };
}
