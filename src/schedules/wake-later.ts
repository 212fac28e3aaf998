/**
 * wake_me_later: a conversation wakes its own session once, later, with a note. Unlike a
 * scheduled task it needs no approval in any mode, so the model (or an instruction it read) could
 * use it to keep the conversation running unasked: a wake-up must be at least a minimum delay
 * ahead (task-planner.ts), a conversation may set only so many per hour (counted per thread in
 * the store, so every process and a restart count together), and one set by a turn a wake-up (or
 * an agent's task) started is one deeper in its chain, refused past the deepest allowed
 * (wake-chains.ts). The wake-up itself is stored like a task, after the same limits (the `add`
 * it is given).
 */
import { type Caller, sessionKeyOf, type ThreadTarget } from "../core/thread-target.js";
import type { Clock } from "../core/clock.js";
import type { SlotBudget } from "../store/slot-budget.js";
import type { Outcome } from "../subscriptions/channel-access.js";
import { formatIn } from "./occurrences.js";
import { newTaskId, type PromptAuthor, type ScheduledTask } from "./scheduled-task.js";
import type { ScheduleSettings } from "./schedule-settings.js";
import { type Plan, planWake, type WakeArgs } from "./task-planner.js";
import type { ChainRun, WakeChains } from "./wake-chains.js";

/**
 * What wake_me_later hands `wakeLater`: the call's arguments and, from the tool, the scheduled run
 * (a wake-up's, or a task's) that started the calling turn (absent: a person's turn).
 */
export interface NewWakeArgs extends WakeArgs {
  readonly wokenBy?: ChainRun;
}

/**
 * The store key (in 'budgets') under which a conversation's wake_me_later slots are counted: the
 * thread's, not its session's — "new" gives the thread another session id, and a count kept per
 * session would start afresh with it (a prompt-injected model could reset its limit that way).
 */
export const wakeLaterBudgetKey = (target: ThreadTarget): string => `wake-later:${sessionKeyOf(target)}`;

/** What a WakeLater works with: the per-conversation budget, the chains, and how to store the wake-up. */
export interface WakeLaterDeps {
  /** wake_me_later calls per conversation in the last hour (the per-conversation limit). */
  readonly budget: SlotBudget;
  /** How deep in a chain of wake-ups set by woken turns a new wake-up is. */
  readonly chains: WakeChains;
  readonly settings: ScheduleSettings;
  readonly clock: Clock;
  /** The caller's timezone (the platform's, else the default). */
  readonly zoneFor: (caller: Caller) => Promise<string>;
  /** Store and arm the wake-up under `id` after the task limits; a refusal as text. */
  readonly add: (
    caller: Caller,
    prompt: { readonly text: string; readonly by: PromptAuthor },
    plan: Plan & { ok: true },
    id: string,
  ) => Promise<ScheduledTask | string>;
  readonly onError: (error: unknown, context: string) => void;
}

/** Sets wake-ups for wake_me_later; see the module comment. */
export class WakeLater {
  constructor(private readonly deps: WakeLaterDeps) {}

  /**
   * Wake the caller's session once with the note (bounded, rate-limited per conversation; one set
   * by a turn a scheduled run started, `args.wokenBy`, may be one deeper in its chain, refused
   * past the deepest allowed).
   */
  async wake(caller: Caller, args: NewWakeArgs): Promise<Outcome> {
    const { budget, chains, settings, clock, onError } = this.deps;
    const now = clock.now();
    const limit = settings.wakesPerSessionPerHour;
    // The slot is taken first (atomic across processes) and given back when no wake-up is made.
    const slot = await budget.take(wakeLaterBudgetKey(caller.target), limit);
    if (!slot.ok)
      return {
        ok: false,
        message: `This conversation set ${limit} wake-ups in the last hour, the most allowed; try again later.`,
      };
    let made = false;
    try {
      const plan = planWake(args, await this.deps.zoneFor(caller), now, settings);
      if (!plan.ok) return plan;
      const id = newTaskId("wake");
      const linked = await chains.extend(args.wokenBy, id, plan, now, () =>
        this.deps.add(caller, { text: args.note, by: "agent" }, plan, id),
      );
      if (!linked.ok) return linked;
      made = true;
      const chain =
        linked.depth > 1
          ? ` It is wake-up ${linked.depth} of at most ${settings.maxWakeChain} in a row set with no person asking; after that, ask the person.`
          : "";
      return {
        ok: true,
        message: `I will wake this conversation at ${formatIn(plan.firstMs, plan.zone)} (${linked.made.id}).${chain}`,
      };
    } finally {
      if (!made) await slot.release().catch((error: unknown) => onError(error, "giving back a wake-up slot"));
    }
  }
}
