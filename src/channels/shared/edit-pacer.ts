/**
 * EditPacer: post-then-edit pacing of one live message against a platform's edit budget. A
 * change only marks the message stale; the platform's `send` (post the first time, edit after)
 * runs when the budget allows — not before `firstDelayMs` after the turn began (so an answer
 * complete by then goes out as one message), then at most once per `intervalMs`, never two at
 * once, and after a rate limit only once its back-off has passed. Content that first appears
 * after that hold-back (a model slow to start, a busy host) is sent at the next change, or
 * `firstDelayMs` after it at the latest: a quick model's whole answer arrives together with its
 * end, so it still goes out as one message, and a streaming one is shown one chunk later. Sends
 * that change nothing do not spend the budget. Slack and Telegram give it their budget and API
 * calls; the final delivery is theirs, after `finish`.
 */

/** How often a platform lets one message be edited. */
export interface EditBudget {
  /** Minimum time between two sends of the live message. */
  readonly intervalMs: number;
  /** How long after the turn began the first send waits, so quick answers go out as one message. */
  readonly firstDelayMs: number;
}

/** What a send did: made a call, found nothing new to send, or met a rate limit. */
export type SendOutcome = "sent" | "unchanged" | { readonly retryAfterMs: number };

export interface EditPacerOptions {
  readonly budget: EditBudget;
  /** Brings the live message up to date. */
  readonly send: () => Promise<SendOutcome>;
  /** A send threw (it counts as a call made). */
  readonly onError: (error: unknown) => void;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));
/** What `finish` returns when no send is in flight. */
const SETTLED: Promise<void> = Promise.resolve();

/** The pacing of one turn's live message (see the module comment); create it when the turn begins. */
export class EditPacer {
  /** When the first send is due: the end of the hold-back, or later for late content. */
  private firstDueAt: number;
  /** Content first appeared after the hold-back: the next change sends it. */
  private late = false;
  private changedOnce = false;
  private lastSentAt = 0;
  private intervalMs: number;
  private backoffUntil = 0;
  private stale = false;
  private timer: NodeJS.Timeout | undefined;
  private timerDueAt = 0;
  private inFlight: Promise<void> | undefined;
  private finished = false;

  constructor(private readonly options: EditPacerOptions) {
    this.intervalMs = options.budget.intervalMs;
    this.firstDueAt = Date.now() + options.budget.firstDelayMs;
  }

  /** The budget changed (Slack: a turn left its native stream for edited pages). */
  useInterval(intervalMs: number): void {
    this.intervalMs = intervalMs;
  }

  /** The message is stale: send it when the budget allows. */
  changed(): void {
    if (this.finished) return;
    if (this.lastSentAt === 0) this.noteFirstChanges(Date.now());
    this.stale = true;
    this.schedule();
  }

  /** Before the first send: content that first appears after the hold-back waits one change. */
  private noteFirstChanges(now: number): void {
    if (!this.changedOnce) {
      this.changedOnce = true;
      if (now < this.firstDueAt) return;
      this.late = true;
      this.firstDueAt = now + this.options.budget.firstDelayMs;
    } else if (this.late) {
      this.firstDueAt = Math.min(this.firstDueAt, now);
    }
  }

  private schedule(): void {
    if (this.inFlight !== undefined || this.finished || !this.stale) return;
    const now = Date.now();
    const due = Math.max(
      this.lastSentAt === 0 ? this.firstDueAt : this.lastSentAt + this.intervalMs,
      this.backoffUntil,
    );
    if (this.timer !== undefined) {
      if (due >= this.timerDueAt) return;
      clearTimeout(this.timer);
    }
    this.timerDueAt = due;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.run();
      },
      Math.max(0, due - now),
    );
  }

  private run(): void {
    if (this.finished || !this.stale) return;
    this.stale = false;
    this.inFlight = this.options
      .send()
      .then(
        (outcome) => this.settle(outcome),
        (error: unknown) => {
          this.options.onError(error);
          this.lastSentAt = Date.now();
        },
      )
      .finally(() => {
        this.inFlight = undefined;
        this.schedule();
      });
  }

  private settle(outcome: SendOutcome): void {
    if (outcome === "unchanged") return;
    this.lastSentAt = Date.now();
    if (outcome !== "sent") {
      this.backoffUntil = this.lastSentAt + outcome.retryAfterMs;
      this.stale = true;
    }
  }

  /** Whether a send of the live message is in flight. */
  get sending(): boolean {
    return this.inFlight !== undefined;
  }

  /** Stop pacing: no further live send starts; resolves once the one in flight (if any) is done. */
  finish(): Promise<void> {
    this.finished = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    return this.inFlight ?? SETTLED;
  }

  /** Resolves when the budget allows the next send (the final edit of a live message). */
  async nextSlot(): Promise<void> {
    if (this.lastSentAt === 0) return;
    const due = Math.max(this.lastSentAt + this.intervalMs, this.backoffUntil);
    await sleep(due - Date.now());
  }
}
