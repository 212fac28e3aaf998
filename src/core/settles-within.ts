/**
 * Waiting for work at most so long: the one shape of "give up waiting after ms" (a drain of
 * sessions or of a channel's hand-over lanes, a command's output after it exited, a card's file
 * upload, a store ping, a readiness check). On the system clock the timer never holds the process
 * open (shutdown's own wait must, see ops/shutdown.ts); a caller with a clock of its own (a lane
 * drain's, which tests drive) passes it. The timer is cleared as soon as the work settles, a
 * rejection included. */
import { type Clock, systemClock } from "./clock.js";

/**
 * Wait for `work` at most `ms` on `clock` (the system clock by default): true when it settled in
 * time (a rejection is passed on), false when the time ran out.
 */
export async function settlesWithin(
  work: Promise<unknown>,
  ms: number,
  clock: Clock = systemClock,
): Promise<boolean> {
  let timer: unknown;
  const late = new Promise<false>((resolve) => {
    timer = clock.setTimer(() => resolve(false), ms);
  });
  try {
    return await Promise.race([work.then(() => true as const), late]);
  } finally {
    clock.clearTimer(timer);
  }
}
