/**
 * Channel access for a caller: find the platform directory of the calling conversation, resolve
 * the channel the agent named, and check with the platform that the person asking is a member of
 * it — the bot must never become a way to read a channel the person is not in. Every refusal says
 * why. Shared by subscribe_channel and catch_up.
 */
import type { Caller, ThreadTarget } from "../core/thread-target.js";
import { failureText, type PlatformDirectory, type ResolvedChannel } from "./platform-directory.js";
import { type ChannelRef, channelLabel } from "./subscription.js";

/** The outcome of a subscription request, as the tools report it. */
export interface Outcome {
  readonly ok: boolean;
  readonly message: string;
}

export type ChannelAccess =
  | { readonly ok: true; readonly directory: PlatformDirectory; readonly ref: ChannelRef }
  | { readonly ok: false; readonly message: string };

/** Directories by platform and workspace. */
export class DirectoryLookup {
  private readonly directories: Map<string, PlatformDirectory>;

  constructor(directories: readonly PlatformDirectory[]) {
    this.directories = new Map(directories.map((d) => [`${d.platform}:${d.workspace}`, d]));
  }

  /** Add (or replace) the directory of a platform workspace, e.g. once its channel has connected. */
  add(directory: PlatformDirectory): void {
    this.directories.set(`${directory.platform}:${directory.workspace}`, directory);
  }

  /** The directory for a platform workspace, if that platform supports subscriptions. */
  find(platform: string, workspace: string): PlatformDirectory | undefined {
    return this.directories.get(`${platform}:${workspace}`);
  }
}

/**
 * Resolve `channel` on the caller's platform and check the requester's membership — or, given
 * `mayUse`, that test instead (posting may take more than membership: posting-access.ts).
 */
export async function accessChannel(
  lookup: DirectoryLookup,
  caller: Caller,
  channel: string,
  mayUse?: (channel: ResolvedChannel, userId: string) => Promise<boolean>,
): Promise<ChannelAccess> {
  const { target, requester } = caller;
  const directory = lookup.find(target.platform, target.workspace);
  if (!directory) {
    return refuse(
      `Channel subscriptions work in Slack and Telegram conversations with a configured bot; this conversation is on ${target.platform} (${target.workspace}).`,
    );
  }
  let resolved: Awaited<ReturnType<PlatformDirectory["resolveChannel"]>>;
  try {
    resolved = await directory.resolveChannel(channel.trim());
  } catch (error) {
    return refuse(`I could not look up ${channel} on ${directory.platform}: ${failureText(error)}`);
  }
  if (!resolved.ok) return refuse(resolved.error);
  const ref: ChannelRef = {
    platform: directory.platform,
    workspace: directory.workspace,
    channel: resolved.channel,
    ...(resolved.thread !== undefined ? { thread: resolved.thread } : {}),
    name: resolved.name,
  };
  const label = channelLabel(ref);
  let member: boolean;
  try {
    member = await (mayUse ? mayUse(resolved, requester.id) : directory.isMember(ref.channel, requester.id));
  } catch (error) {
    return refuse(
      `I could not check whether ${requester.name || requester.id} is a member of ${label}, so I won't read it: ${failureText(error)}`,
    );
  }
  if (!member) {
    return refuse(
      `${requester.name || requester.id} is not a member of ${label}. I only read channels the person asking is a member of — join ${label} first.`,
    );
  }
  return { ok: true, directory, ref };
}

/** Whether the channel scope is the calling conversation itself. */
export function isOwnConversation(ref: ChannelRef, target: ThreadTarget): boolean {
  if (
    ref.platform !== target.platform ||
    ref.workspace !== target.workspace ||
    ref.channel !== target.channel
  )
    return false;
  return target.thread === undefined || ref.thread === target.thread;
}

function refuse(message: string): ChannelAccess {
  return { ok: false, message };
}
