/**
 * One at a time per sender, for work on a resource everyone shares. The PDF reader's worker slots
 * are the process's (pdf-text.ts), its line is first come first served, and a message's files are
 * read in parallel: one person sending ten PDFs that each take the reader its whole time (a few
 * kilobytes of PDF can) held every slot for minutes, while everyone else's PDFs waited in line
 * and failed at the wait limit. Here each sender's jobs run one after another, so a sender has at
 * most one in the reader or its line, and anyone else's PDF waits behind one of theirs at most.
 * A sender's own later PDFs wait for their earlier ones instead.
 */

/** Runs each key's jobs one after another (see the module header). */
export class OnePerSender {
  /** Per sender, what settles once their last job started so far has. */
  private readonly tails = new Map<string, Promise<void>>();

  /** Run `job` once every job `run` was given earlier for `sender` has settled. */
  async run<T>(sender: string, job: () => Promise<T>): Promise<T> {
    const before = this.tails.get(sender) ?? Promise.resolve();
    let settled!: () => void;
    const mine = new Promise<void>((resolve) => {
      settled = resolve;
    });
    const tail = before.then(() => mine);
    this.tails.set(sender, tail);
    try {
      await before;
      return await job();
    } finally {
      settled();
      // The last job of the sender leaves nothing behind.
      if (this.tails.get(sender) === tail) this.tails.delete(sender);
    }
  }
}
