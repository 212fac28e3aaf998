/**
 * Draining the session pumps at shutdown: how long running turns get to end or park at a person,
 * when the ones still running are interrupted, and what became of each. Apart from the scheduler
 * because it only waits on pumps — it starts none.
 */
import { settlesWithin } from "../core/settles-within.js";
import type { LiveSession } from "./live-session.js";

/** What `drain` did. */
export interface DrainReport {
  readonly finished: number;
  readonly interrupted: number;
  readonly parked: number;
}

/**
 * Wait up to `graceMs` for the running pumps to end or park at a person, then interrupt those
 * still running (the engine answers their open calls) and wait for them again up to `graceMs`.
 * Turns parked at a person are left as they are: their pending items and histories are already
 * persisted, and they continue after the restart. `pumps` is the scheduler's live map (pumps
 * leave it as they end); the caller has already stopped new turns from starting.
 */
export async function drainPumps(
  pumps: ReadonlyMap<LiveSession, Promise<void>>,
  graceMs: number,
  isParked: (live: LiveSession) => boolean,
  nextPark: () => Promise<void>,
): Promise<DrainReport> {
  const before = [...pumps.keys()];
  const running = () => [...pumps.keys()].filter((l) => !isParked(l));
  const settle = async (wakeOnPark: boolean) => {
    const deadline = Date.now() + graceMs;
    for (;;) {
      const left = running();
      const remaining = deadline - Date.now();
      if (left.length === 0 || remaining <= 0) return;
      const ended = Promise.allSettled(left.map((l) => pumps.get(l)));
      await settlesWithin(wakeOnPark ? Promise.race([ended, nextPark()]) : ended, remaining);
    }
  };
  await settle(true);
  const interrupted = running();
  for (const live of interrupted) live.engine.interrupt();
  await settle(false);
  const parked = [...pumps.keys()].filter(isParked);
  await Promise.allSettled(before.map((l) => l.flush()));
  return {
    finished: before.length - interrupted.length - parked.length,
    interrupted: interrupted.length,
    parked: parked.length,
  };
}
