/**
 * WakeAccess: a standing item (a scheduled task, a channel subscription) wakes a turn only for a
 * person who may still use the bot in that conversation. Access is checked when a message comes
 * in, but a standing item runs later, as its creator, without one: removed from the allowed users,
 * turned into a guest, deactivated, or left in a group no longer allowed, the creator's tasks and
 * subscriptions would otherwise keep running commands and reading channels with their authority.
 * Channels register their platform's rules (ChannelAdapter.mayAct); the wakers get the session
 * layer through `guard`, which answers "refused" instead of waking. A platform that registered no
 * rules (the console, which has none) is not checked.
 */
import type { ThreadTarget } from "../core/thread-target.js";
import type { NotifyingSessions } from "../subscriptions/session-wake.js";

/** Whether `userId` may use the bot in `target`'s conversation under the platform's rules now. */
export type AccessCheck = (userId: string, target: ThreadTarget) => Promise<boolean>;

/** The platforms' access rules, and the wake-up gate built on them (see the module header). */
export class WakeAccess {
  private readonly checks = new Map<string, AccessCheck>();

  /** A channel's rules for its platform; a restarted channel replaces its old ones. */
  register(platform: string, check: AccessCheck): void {
    this.checks.set(platform, check);
  }

  /**
   * `sessions` with a `wake` that first asks the requester's platform whether they may still use
   * the bot in the turn's conversation, and answers "refused" when not. A check that fails
   * (the platform did not answer) rejects, as a wake that cannot be taken now does.
   */
  guard(sessions: NotifyingSessions): NotifyingSessions {
    return {
      wake: async (turn) => {
        const check = this.checks.get(turn.target.platform);
        if (check && !(await check(turn.requester.id, turn.target))) {
          const who = turn.requester.name || turn.requester.id;
          return { status: "refused", reason: `${who} may no longer use Coworker in this conversation` };
        }
        return sessions.wake(turn);
      },
      isBusy: (sessionId) => sessions.isBusy(sessionId),
      notify: (target, text) => sessions.notify(target, text),
    };
  }
}
