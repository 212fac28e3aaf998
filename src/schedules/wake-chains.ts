/**
 * Wake chains: how many runs in a row a conversation has set up with no person asking. A wake-up
 * set by a turn a person started (or the run of a task a person set up) is the first of its chain;
 * one set by a turn a wake-up started is one deeper than that wake-up, and such a turn may set
 * only one, so a chain never branches. Past the configured depth wake_me_later is refused, telling
 * the model to ask the person; their answer starts a turn of their own, and with it a new chain.
 * Without this, one injected instruction ("always wake yourself again to continue") would keep a
 * conversation running unasked model turns for ever.
 *
 * A scheduled task no person approved (its text the agent's own: auto mode, a standing grant, the
 * reviewer's allow) is a link of its chain too, or a woken turn at the end could schedule a run in
 * a few minutes whose wake-ups start afresh: such a task is one deeper than the turn that created
 * it (1 in a person's turn), counts as that turn's one follower, and is refused past the depth
 * like a wake-up; a turn its run starts counts as woken at its depth (each run of a repeating one
 * may set one follower). A task a person approved records no depth: its runs start new chains.
 *
 * A depth is kept in the store ('schedules' space, beside the tasks; every process reads it) until
 * a while after the last run it is for (for a repeating task with no end, as long as the store
 * keeps it): a wake-up's task record goes as soon as its turn is handed over, and the woken turn
 * asks later, perhaps after waiting behind other turns. A waking wake-up whose depth is not known
 * (kept too long, or set before depths were kept) counts as the deepest allowed: the chain stops
 * there rather than start again. A task with no depth is one a person approved (or one set up
 * before depths were kept for tasks): its run starts a chain.
 */
import type { KeyValueSpace } from "../store/store.js";
import { isWakeId, type TaskSchedule } from "./scheduled-task.js";

/** How long after its last due time a depth (and a run's one follower's claim) is kept. */
const KEEP_AFTER_DUE_MS = 7 * 86_400_000;

const depthKey = (taskId: string) => `wake-chain:${taskId}`;
const nextKey = (runId: string) => `wake-chain:${runId}:next`;

/**
 * The scheduled run that started a turn: its wake-up's or task's id and, for a task (whose runs
 * may repeat), the run's due time (ISO), so each run may set its own one follower.
 */
export interface ChainRun {
  readonly taskId: string;
  readonly dueAt?: string;
}

/**
 * The place a new wake-up takes in its chain (`depth`, 1 for the first; `release` gives the
 * waking turn's one follower back when no wake-up is made after all), or why it may not be set.
 */
type ChainLink =
  | { readonly ok: true; readonly depth: number; readonly release: () => Promise<void> }
  | { readonly ok: false; readonly message: string };

/** The first link of a chain: no follower taken, so nothing to give back. */
const fresh: ChainLink = { ok: true, depth: 1, release: async () => undefined };

/** Wake-up chain depths in the store; see the module comment. */
export class WakeChains {
  constructor(
    private readonly space: KeyValueSpace,
    private readonly maxDepth: number,
    private readonly onError: (error: unknown, context: string) => void,
  ) {}

  /**
   * Make wake-up or task `id` (its schedule, first due at `firstMs`) the next link of the chain of
   * the run that started the calling turn (`startedBy`; undefined: no scheduled run did): its depth
   * is kept before `make` stores it, so the turn its run starts finds it, and the run's one
   * follower taken is given back when `make` stores nothing (its refusal, as text) or throws. The
   * made task with its depth, or why it may not be set.
   */
  async extend<T extends object>(
    startedBy: ChainRun | undefined,
    id: string,
    when: { readonly schedule: TaskSchedule; readonly firstMs: number },
    nowMs: number,
    make: () => Promise<T | string>,
  ): Promise<
    | { readonly ok: true; readonly made: T; readonly depth: number }
    | { readonly ok: false; readonly message: string }
  > {
    const link = await this.link(startedBy);
    if (!link.ok) return link;
    let made: T | string | undefined;
    try {
      await this.record(id, link.depth, when, nowMs);
      made = await make();
    } finally {
      if (typeof made !== "object")
        await link.release().catch((error: unknown) => this.onError(error, "giving back a chain's follower"));
    }
    return typeof made === "string" ? { ok: false, message: made } : { ok: true, made, depth: link.depth };
  }

  /**
   * The link for a wake-up (or an agent's task) set by a turn that `startedBy` started, or by a
   * turn no scheduled run started (undefined). Taking a follower of that run is atomic across
   * processes.
   */
  private async link(startedBy: ChainRun | undefined): Promise<ChainLink> {
    if (startedBy === undefined) return fresh;
    const { taskId } = startedBy;
    const wake = isWakeId(taskId);
    const stored = await this.space.get<unknown>(depthKey(taskId));
    const known = typeof stored === "number" && Number.isInteger(stored);
    if (!known && !wake) return fresh;
    const depth = known ? stored : this.maxDepth;
    const what = wake ? `wake-up ${taskId}` : `a run of task ${taskId}`;
    if (depth >= this.maxDepth)
      return {
        ok: false,
        message: `This turn was started by ${what}, the ${this.maxDepth}${ordinal(this.maxDepth)} in a row set with no person asking, the most allowed. Do not try to wake yourself again or schedule another run: say what you were waiting for and ask the person whether to keep checking. Once they answer, you may set a wake-up again.`,
      };
    const runId = wake || startedBy.dueAt === undefined ? taskId : `${taskId}@${startedBy.dueAt}`;
    if (!(await this.space.setIfAbsent(nextKey(runId), true, KEEP_AFTER_DUE_MS)))
      return {
        ok: false,
        message: wake
          ? `This turn was started by ${what} and has already set the wake-up that follows it; a turn started by a wake-up may set only one.`
          : `This turn was started by ${what} and has already set the wake-up or task that follows it; such a turn may set only one.`,
      };
    return {
      ok: true,
      depth: depth + 1,
      release: async () => {
        await this.space.delete(nextKey(runId));
      },
    };
  }

  /**
   * Keep the depth of wake-up or task `taskId` (its schedule, first due at `firstMs`) until a while
   * after its last run is due; a repeating task with no end, as long as the store keeps it.
   */
  private async record(
    taskId: string,
    depth: number,
    when: { readonly schedule: TaskSchedule; readonly firstMs: number },
    nowMs: number,
  ): Promise<void> {
    const { schedule } = when;
    const lastDueMs =
      schedule.type === "once"
        ? when.firstMs
        : schedule.until === undefined
          ? undefined
          : Date.parse(schedule.until);
    if (lastDueMs === undefined) await this.space.set(depthKey(taskId), depth);
    else await this.space.set(depthKey(taskId), depth, Math.max(0, lastDueMs - nowMs) + KEEP_AFTER_DUE_MS);
  }
}

/** "st", "nd", "rd" or "th" after a count. */
function ordinal(n: number): string {
  const tens = n % 100;
  if (tens >= 11 && tens <= 13) return "th";
  return ["th", "st", "nd", "rd"][n % 10] ?? "th";
}
