/**
 * The target of a Slack conversation as every part of this channel names it — messages, Stop and
 * Retry presses, the slash command. Its workspace is the installation's team, whoever writes: on
 * an Enterprise Grid or in a Slack Connect channel a sender's team differs, and one thread is
 * still one session. The sender's team travels in `extra.team` (native streaming names the
 * recipient's team with it), beside the person and the kind of conversation.
 */
import type { ThreadTarget } from "../../core/thread-target.js";
import type { ConversationKind } from "./slack-conversation-kind.js";

/** Where and by whom, as a Slack delivery tells it. */
export interface SlackThreadAt {
  readonly channel: string;
  /** The thread's root ts; none for a command typed at a channel's top level. */
  readonly thread?: string | undefined;
  readonly user: string;
  readonly kind: ConversationKind;
  /** The sender's own team, when the delivery names it. */
  readonly senderTeam?: string | undefined;
}

/** The thread target of `at` in the installation whose team is `installationTeam`. */
export function slackThreadTarget(installationTeam: string, at: SlackThreadAt): ThreadTarget {
  return {
    platform: "slack",
    workspace: installationTeam,
    channel: at.channel,
    ...(at.thread === undefined ? {} : { thread: at.thread }),
    extra: { user: at.user, kind: at.kind, team: at.senderTeam ?? installationTeam },
  };
}
