/**
 * Waiting for work at most so long: the one shape of "give up waiting after ms" (a drain of
 * sessions, a command's output after it exited, a card's file upload, a store ping, a readiness
 * check). The timer never holds the process open (shutdown's own wait must, see ops/shutdown.ts),
 * and is cleared as soon as the work settles. */

/** Wait for `work` at most `ms`: true when it settled in time (a rejection is passed on), false when the time ran out. */
export async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    timer.unref();
  });
  try {
    return await Promise.race([work.then(() => true as const), late]);
  } finally {
    clearTimeout(timer);
  }
}
