/**
 * WakeAccess: a standing item (a scheduled task, a channel subscription) wakes a turn only for a
 * person who may still use the bot in that conversation. Access is checked when a message comes
 * in, but a standing item runs later, as its creator, without one: removed from the allowed users,
 * turned into a guest, deactivated, out of the conversation, or left in a group no longer allowed,
 * the creator's tasks and subscriptions would otherwise keep running commands and reading channels
 * with their authority. Channels register their platform's rules (ChannelAdapter.mayAct) once they
 * have connected; the wakers get the session layer through `guard`, which answers "refused"
 * instead of waking. Schedules start before the channels connect, so a wake-up for a platform
 * whose rules are not registered yet is held until they are (then checked as usual), and rejected
 * — not let through — when they do not come within the hold or the wakers shut down: the waker
 * treats that as a wake that could not be taken now. Only a platform with no rules at all (the
 * console, whose one person runs the process) is not checked. The same rules answer, unheld,
 * whether a decision typed in another conversation may decide an item asked in theirs (mayAct).
 */
import { CONSOLE_PLATFORM } from "../core/console-platform.js";
import { personInMarkdown } from "../core/person-text.js";
import type { ThreadTarget } from "../core/thread-target.js";
import type { WakeTurn } from "../sessions/wake-turns.js";
import type { NotifyingSessions } from "../subscriptions/session-wake.js";

/** Whether `userId` may use the bot in `target`'s conversation under the platform's rules now. */
export type AccessCheck = (userId: string, target: ThreadTarget) => Promise<boolean>;

export interface WakeAccessOptions {
  /** Platforms that have no access rules, whose wake-ups are not checked; default: the console. */
  readonly unchecked?: readonly string[];
  /**
   * How long a wake-up waits for its platform to register its rules (the channel is still
   * connecting) before it is rejected; default 2 minutes. 0: rejected at once.
   */
  readonly holdMs?: number;
}

const DEFAULT_HOLD_MS = 2 * 60 * 1000;

interface Waiter {
  readonly release: (check: AccessCheck) => void;
}

/** The platforms' access rules, and the wake-up gate built on them (see the module header). */
export class WakeAccess {
  private readonly checks = new Map<string, AccessCheck>();
  private readonly waiting = new Map<string, Set<Waiter>>();
  private readonly unchecked: ReadonlySet<string>;
  private readonly holdMs: number;

  constructor(options: WakeAccessOptions = {}) {
    this.unchecked = new Set(options.unchecked ?? [CONSOLE_PLATFORM]);
    this.holdMs = options.holdMs ?? DEFAULT_HOLD_MS;
  }

  /** A channel's rules for its platform (releasing the wake-ups held for them); a restarted channel replaces its old ones. */
  register(platform: string, check: AccessCheck): void {
    this.checks.set(platform, check);
    const held = this.waiting.get(platform);
    this.waiting.delete(platform);
    for (const waiter of held ?? []) waiter.release(check);
  }

  /**
   * Whether `userId` may use the bot in `target`'s conversation under its platform's rules now:
   * the check a decision typed in another conversation (`approve <id>`) runs for the one its item
   * was asked in. True on a platform with no rules; rejects when the platform's rules are not
   * registered (it is not connected: nothing is held for a person waiting on the answer) or
   * cannot say.
   */
  async mayAct(userId: string, target: ThreadTarget): Promise<boolean> {
    const check = this.checks.get(target.platform);
    if (check) return check(userId, target);
    if (this.unchecked.has(target.platform)) return true;
    throw new Error(`${target.platform} is not connected: cannot check who may act there`);
  }

  /**
   * `sessions` with a `wake` that first asks the requester's platform whether they may still use
   * the bot in the turn's conversation, and answers "refused" when not. A check that fails
   * (the platform did not answer) rejects, as a wake that cannot be taken now does; so does a
   * wake-up whose platform registered no rules within the hold, or when `signal` aborts (the
   * wakers are shutting down) while it is held.
   */
  guard(sessions: NotifyingSessions, signal?: AbortSignal): NotifyingSessions {
    return {
      wake: async (turn) => {
        const check = await this.checkFor(turn, signal);
        if (check && !(await check(turn.requester.id, turn.target))) {
          return {
            status: "refused",
            reason: `${nameOf(turn)} may no longer use Coworker in this conversation`,
          };
        }
        return sessions.wake(turn);
      },
      isBusy: (sessionId) => sessions.isBusy(sessionId),
      notify: (target, text) => sessions.notify(target, text),
    };
  }

  /** The turn's platform's rules; undefined only for a platform that has none; held while they are not registered yet. */
  private checkFor(turn: WakeTurn, signal: AbortSignal | undefined): Promise<AccessCheck | undefined> {
    const { platform } = turn.target;
    const check = this.checks.get(platform);
    if (check) return Promise.resolve(check);
    if (this.unchecked.has(platform)) return Promise.resolve(undefined);
    const notConnected = () =>
      new Error(
        `${platform} is not connected: cannot check whether ${nameOf(turn)} may still use Coworker there`,
      );
    if (this.holdMs <= 0 || signal?.aborted) return Promise.reject(notConnected());
    return new Promise<AccessCheck>((resolve, reject) => {
      const held = this.waiting.get(platform) ?? new Set<Waiter>();
      this.waiting.set(platform, held);
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", giveUp);
        held.delete(waiter);
        if (held.size === 0 && this.waiting.get(platform) === held) this.waiting.delete(platform);
      };
      const giveUp = () => {
        done();
        reject(notConnected());
      };
      const waiter: Waiter = {
        release: (registered) => {
          done();
          resolve(registered);
        },
      };
      const timer = setTimeout(giveUp, this.holdMs);
      timer.unref?.();
      signal?.addEventListener("abort", giveUp, { once: true });
      held.add(waiter);
    });
  }
}

/**
 * The turn's requester as the notices that quote a refusal name them (markdown posts: a task's or
 * subscription's pause notice, a task's status): the name as plain text, with the user id it
 * cannot fake (personInMarkdown).
 */
function nameOf(turn: WakeTurn): string {
  const { id, name } = turn.requester;
  return personInMarkdown({ platform: turn.target.platform, id, name: name || id });
}
