/**
 * SessionLock: one turn at a time per session. The session manager only talks to the interface,
 * so a distributed lock (Redis, Postgres advisory locks) can replace the in-process mutex when
 * several Coworker processes share one store.
 */

/** A held lock; release it exactly once (further calls are ignored). */
export interface SessionLease {
  release(): void;
  /**
   * Aborted once the lock is no longer held — a lease of several processes that was lost (see
   * lease-lock.ts) or released; none for a lock that cannot be lost (in one process). No turn
   * starts under an aborted one.
   */
  readonly signal?: AbortSignal;
}

/** Mutual exclusion per session key. */
export interface SessionLock {
  /** Resolves once the caller holds the lock for `key`; waiters are served in arrival order. */
  acquire(key: string): Promise<SessionLease>;
  /** Whether someone holds (or waits for) the lock for `key`. */
  isHeld(key: string): boolean;
}

/** Run `task` while holding `key`; the lock is released however the task ends. */
export async function withSessionLock<T>(lock: SessionLock, key: string, task: () => Promise<T>): Promise<T> {
  const lease = await lock.acquire(key);
  try {
    return await task();
  } finally {
    lease.release();
  }
}

/** The head of a key's queue when the lock was free: granted at once, nothing to call. */
const HOLDER = (): void => undefined;

/** A FIFO mutex per key, inside one process. */
export class InProcessSessionLock implements SessionLock {
  /** key → the queue of waiters; the head holds the lock. */
  private readonly queues = new Map<string, Array<() => void>>();

  acquire(key: string): Promise<SessionLease> {
    const queue = this.queues.get(key);
    if (!queue) {
      this.queues.set(key, [HOLDER]);
      return Promise.resolve(this.leaseFor(key));
    }
    return new Promise((resolve) => queue.push(() => resolve(this.leaseFor(key))));
  }

  isHeld(key: string): boolean {
    return this.queues.has(key);
  }

  private leaseFor(key: string): SessionLease {
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        const queue = this.queues.get(key);
        queue?.shift();
        const next = queue?.[0];
        if (next) next();
        else this.queues.delete(key);
      },
    };
  }
}
