/**
 * Whether a Slack conversation is a DM or a channel: the one rule for it. Slack gives DMs ids
 * starting with "D"; the inbound side also records the kind it read from the event in a thread
 * target's `extra`, which wins when present. Access rules (the channel list governs channels
 * only) and the capability latches (per kind) both go by it.
 */
import type { ThreadTarget } from "../../core/thread-target.js";

export type ConversationKind = "dm" | "channel";

/** Whether a conversation id is a DM's (Slack gives DMs ids starting with "D") or a channel's. */
export function kindOfChannel(channel: string): ConversationKind {
  return channel.startsWith("D") ? "dm" : "channel";
}

/** The kind a thread target's `extra` records, else the kind its channel id tells. */
export function kindOf(target: ThreadTarget): ConversationKind {
  const kind = target.extra?.kind;
  if (kind === "dm" || kind === "channel") return kind;
  return kindOfChannel(target.channel);
}
