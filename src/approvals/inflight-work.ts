/**
 * InflightWork: the card posts and presses a PendingHub has under way, so shutdown can wait for
 * them before the store closes (a press half-settled at close would be settled only at the next
 * start). A small set of promises, each removed when it settles.
 */
export class InflightWork {
  private readonly running = new Set<Promise<unknown>>();

  /** Keep `work` in the set until it settles; resolves or rejects as `work` does. */
  async track<T>(work: Promise<T>): Promise<T> {
    this.running.add(work);
    try {
      return await work;
    } finally {
      this.running.delete(work);
    }
  }

  /** Resolves once nothing is under way, including work started while waiting. */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}
