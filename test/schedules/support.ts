/**
 * Support for the schedules unit tests: a manual clock (time moves only when the test says, and
 * due timers fire in order), a recording session layer (wake turns, busy flags, "gone" sessions),
 * callers in two conversations of one person, and a ScheduleService harness that can restart on
 * the same store.
 */
import os from "node:os";
import type { Clock, TimerHandle } from "../../src/core/clock.js";
import { ScheduleService, type ScheduleServiceOptions } from "../../src/schedules/schedule-service.js";
import { DEFAULT_SCHEDULE_SETTINGS, type ScheduleSettings } from "../../src/schedules/schedule-settings.js";
import type { Caller, ThreadTarget } from "../../src/core/thread-target.js";
import type { WakeResult, WakeTurn } from "../../src/sessions/wake-turns.js";
import { createStore } from "../../src/store/create-store.js";
import { storeSlotBudget } from "../../src/store/slot-budget.js";
import type { Store } from "../../src/store/store.js";
import type { WakeableSessions } from "../../src/subscriptions/session-wake.js";

/** A clock whose time moves only by `advance`; timers due by then fire, earliest first. */
export class ManualClock implements Clock {
  private timers: { id: number; at: number; callback: () => void }[] = [];
  private seq = 0;

  constructor(private time: number) {}

  now(): number {
    return this.time;
  }

  setTimer(callback: () => void, ms: number): TimerHandle {
    const id = ++this.seq;
    this.timers.push({ id, at: this.time + Math.max(0, ms), callback });
    return id;
  }

  clearTimer(handle: TimerHandle): void {
    this.timers = this.timers.filter((t) => t.id !== handle);
  }

  /** Move time forward by `ms`, firing each timer at its due time. */
  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      const next = [...this.timers].sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!next || next.at > end) break;
      this.timers = this.timers.filter((t) => t !== next);
      this.time = Math.max(this.time, next.at);
      next.callback();
    }
    this.time = end;
  }

  /** Timers waiting. */
  get pending(): number {
    return this.timers.length;
  }
}

/**
 * Records wake turns; a session can be made "gone", or busy with a run of each task still waiting,
 * and a person "refused" (no longer allowed where their tasks run).
 */
export class RecordingSessions implements WakeableSessions {
  readonly turns: WakeTurn[] = [];
  readonly gone = new Set<string>();
  readonly stillWaiting = new Set<string>();
  /** User ids whose wake turns are refused, as the app's access check refuses them. */
  readonly refused = new Set<string>();
  readonly notices: { target: ThreadTarget; text: string }[] = [];

  async wake(turn: WakeTurn): Promise<WakeResult> {
    if (this.gone.has(turn.sessionId)) return { status: "gone", reason: "the conversation no longer exists" };
    if (this.refused.has(turn.requester.id))
      return {
        status: "refused",
        reason: `${turn.requester.name} may no longer use Coworker in this conversation`,
      };
    if (this.stillWaiting.has(turn.sessionId))
      return { status: "skipped", reason: "its previous run has not started yet" };
    this.turns.push(turn);
    return { status: "started" };
  }

  isBusy(): boolean {
    return false;
  }

  async notify(target: ThreadTarget, text: string): Promise<void> {
    this.notices.push({ target, text });
  }
}

export const HOME: ThreadTarget = { platform: "slack", workspace: "T1", channel: "D1ANA", thread: "100.1" };
export const OTHER: ThreadTarget = { platform: "slack", workspace: "T1", channel: "D1ANA", thread: "200.2" };

/** Ana in her first DM thread. */
export const ANA_HOME: Caller = {
  sessionId: "s-home",
  target: HOME,
  requester: { id: "U1ANA", name: "Ana" },
};
/** Ana in another DM thread. */
export const ANA_OTHER: Caller = {
  sessionId: "s-other",
  target: OTHER,
  requester: { id: "U1ANA", name: "Ana" },
};
/** Ben in a thread of #general. */
export const BEN: Caller = {
  sessionId: "s-ben",
  target: { platform: "slack", workspace: "T1", channel: "C1GEN", thread: "300.3" },
  requester: { id: "U2BEN", name: "Ben" },
};

/** 2026-12-01T08:00:00Z, a Tuesday. */
export const T0 = Date.parse("2026-12-01T08:00:00Z");

/** A minute in ms. */
export const MIN = 60_000;

/** `ms` as an ISO timestamp (what the tools take in `at`). */
export const iso = (ms: number): string => new Date(ms).toISOString();

/** Let promise chains started by fired timers settle. */
export async function flush(service?: ScheduleService): Promise<void> {
  for (let i = 0; i < 5; i++) {
    await service?.settled();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

export interface Harness {
  readonly store: Store;
  readonly clock: ManualClock;
  readonly sessions: RecordingSessions;
  readonly errors: { error: unknown; context: string }[];
  service: ScheduleService;
  /** A new service on the same store (a restart), started. */
  restart(): Promise<ScheduleService>;
  close(): Promise<void>;
}

/** A started service on a memory store (or the given one) with a manual clock at T0. */
export async function openHarness(
  options: {
    store?: Store;
    settings?: Partial<ScheduleSettings>;
    clock?: ManualClock;
    extra?: Partial<ScheduleServiceOptions>;
  } = {},
): Promise<Harness> {
  const store = options.store ?? (await createStore({ url: "memory:", dataDir: os.tmpdir() }));
  const clock = options.clock ?? new ManualClock(T0);
  const sessions = new RecordingSessions();
  const errors: Harness["errors"] = [];
  const open = async () => {
    const service = await ScheduleService.open({
      store,
      sessions,
      notify: (target, text) => sessions.notify(target, text),
      settings: { ...DEFAULT_SCHEDULE_SETTINGS, ...options.settings },
      clock,
      approvers: ["slack:U9BOSS"],
      onError: (error, context) => errors.push({ error, context }),
      wakeBudget: storeSlotBudget(store.space("budgets"), { now: () => clock.now() }),
      ...options.extra,
    });
    service.start();
    return service;
  };
  const harness: Harness = {
    store,
    clock,
    sessions,
    errors,
    service: await open(),
    async restart() {
      await harness.service.shutdown();
      harness.service = await open();
      return harness.service;
    },
    async close() {
      await harness.service.shutdown();
      await store.close();
    },
  };
  return harness;
}
