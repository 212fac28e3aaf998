/**
 * Who a retry runs as, and who may ask for one. A retried turn runs again on the failed turn's
 * input, so it runs as the person that turn ran for — its requester, recorded with the turn
 * (`lastTurnRequester`) — never as whoever pressed Retry: the turn's tools act with its requester's
 * access and channel memberships, and the press must not carry one person's words under another's
 * access (as TurnScheduler.steer refuses another person's words into a running turn). In a shared
 * thread only that requester or a configured approver may press it; in a DM or private chat the one
 * person there may.
 */
import { allowedApproversFor, type ApprovalsConfig, mayDecide } from "../approvals/authorisation.js";
import type { ConversationMessage } from "../core/messages.js";
import { personText } from "../core/person-text.js";
import { isSharedThread, type PlatformUser } from "../core/thread-target.js";
import type { SessionRecord } from "./session-record.js";
import { openingMessage } from "./wake-turns.js";

/** The part of a session a retry is decided on. */
export interface RetriedSession {
  readonly record: Pick<SessionRecord, "target" | "lastTurnRequester" | "startedBy">;
  readonly history: readonly ConversationMessage[];
}

/** The refusal when the failed turn's requester is not on record (a record from before it was kept). */
const REQUESTER_UNKNOWN =
  "Who asked for this turn is not on record, so it cannot be retried. Please send the request again.";

/**
 * The person a retry of the session's latest turn runs as: its recorded requester. Records written
 * before the requester was kept name them by the user id on the turn's opening message (by name
 * too when that is the presser or the session's starter); in a DM or private chat, where the
 * presser is the one person there, the presser. Undefined when none of these is known.
 */
export function retryRunsAs(session: RetriedSession, presser: PlatformUser): PlatformUser | undefined {
  const { record } = session;
  if (record.lastTurnRequester) return record.lastTurnRequester;
  const by = openingMessage(session.history)?.meta?.by;
  if (typeof by === "string") {
    if (by === presser.id) return presser;
    return record.startedBy?.id === by ? record.startedBy : { id: by, name: by };
  }
  return isSharedThread(record.target) ? undefined : presser;
}

/**
 * Why `presser` may not retry the session's latest turn, in plain text (channels show a refused
 * press as such), naming the requester with their user id, which no name can fake; undefined when
 * they may: in a shared thread the turn's requester or a configured approver, elsewhere the one
 * person there.
 */
export function retryRefusal(
  session: RetriedSession,
  presser: PlatformUser,
  approvals: Pick<ApprovalsConfig, "approvers" | "perChannel">,
): string | undefined {
  const requester = retryRunsAs(session, presser);
  if (!requester) return REQUESTER_UNKNOWN;
  const { target } = session.record;
  if (!isSharedThread(target)) return undefined;
  if (mayDecide(allowedApproversFor(approvals, target, requester.id), target.platform, presser.id))
    return undefined;
  const named = personText({ platform: target.platform, id: requester.id, name: requester.name });
  return `Only ${named} or a configured approver can retry this.`;
}
