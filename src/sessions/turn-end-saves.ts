/**
 * TurnEndSaves: when, in one process, a finished turn's end gets saved if no later write of its
 * session carries it. The scheduler leaves a turn's end in memory (LiveSession.defer) so that a
 * message following soon starts its turn in the same write; this saves it within a short delay,
 * at once when the session leaves memory (a reload of it waits for that save, so it never reads
 * the record from before), and all of them at `idle()` and at shutdown. One timer serves every
 * waiting session: when it fires, all their ends are saved together, in one store commit (a timer
 * per session cost a commit per finished turn where every message starts a session: Slack DMs).
 * A failed save is logged; the store then still shows the turn in progress, which the session's
 * next use finds done.
 */
import type { Logger } from "pino";
import type { LiveSession } from "./live-session.js";

/** How long a finished turn's end may wait in memory for the session's next write. */
const END_SAVE_DELAY_MS = 1_000;

/** The turn ends of this process's sessions that wait in memory. */
export class TurnEndSaves {
  /** Sessions whose end waits for the timer. */
  private readonly waiting = new Set<LiveSession>();
  /** Saves every waiting end; armed while any waits. */
  private timer: NodeJS.Timeout | undefined;
  /** Saves under way, by session id (a reload of the session waits for its save). */
  private readonly saving = new Map<string, Promise<void>>();

  constructor(
    private readonly logger: Logger,
    private readonly delayMs = END_SAVE_DELAY_MS,
  ) {}

  /** Save the session's turn end within the delay, unless a write of the session carries it first. */
  later(live: LiveSession): void {
    if (!live.hasUnsavedChange) return;
    this.waiting.add(live);
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.all();
    }, this.delayMs);
    this.timer.unref();
  }

  /** Save the session's turn end now; resolves once saved, or once the failure is logged. */
  now(live: LiveSession): Promise<void> {
    this.waiting.delete(live);
    const saved = live
      .flush()
      .catch((error: unknown) =>
        this.logger.error({ err: error, sessionId: live.id }, "saving a turn's end failed"),
      )
      .finally(() => {
        if (this.saving.get(live.id) === saved) this.saving.delete(live.id);
      });
    this.saving.set(live.id, saved);
    return saved;
  }

  /** Save every turn end that waits, now. */
  async all(): Promise<void> {
    await Promise.all([...this.waiting].map((live) => this.now(live)));
  }

  /** Resolves once a save of the session under way now is done (at once when none is). */
  async settled(sessionId: string): Promise<void> {
    await this.saving.get(sessionId);
  }
}
