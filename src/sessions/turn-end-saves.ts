/**
 * TurnEndSaves: when, in one process, a finished turn's end gets saved if no later write of its
 * session carries it. The scheduler leaves a turn's end in memory (LiveSession.defer) so that a
 * message following soon starts its turn in the same write; this saves it within a short delay,
 * at once when the session leaves memory (a reload of it waits for that save, so it never reads
 * the record from before), and all of them at `idle()` and at shutdown. One timer serves every
 * waiting session: when it fires, the ends waiting then are saved in groups, a store commit each,
 * one group per loop turn so deliveries are acknowledged in between (a timer per session cost a
 * commit per finished turn where every message starts a session, as in Slack DMs; all of them in
 * one go held the event loop for milliseconds under load). A failed save is logged; the store
 * then still shows the turn in progress, which the session's next use finds done.
 */
import type { Logger } from "pino";
import type { LiveSession } from "./live-session.js";

/** How long a finished turn's end may wait in memory for the session's next write. */
const END_SAVE_DELAY_MS = 1_000;
/** Turn ends saved together (one store commit) before the loop takes other work. */
export const END_SAVES_PER_GROUP = 16;

/** The turn ends of this process's sessions that wait in memory. */
export class TurnEndSaves {
  /** Sessions whose end waits for the timer. */
  private readonly waiting = new Set<LiveSession>();
  /** Saves the ends waiting when it fires; set from arming until those are saved. */
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
    if (!this.timer) this.arm();
  }

  private arm(): void {
    this.timer = setTimeout(() => void this.saveDue(), this.delayMs);
    this.timer.unref();
  }

  /** Save the ends waiting now, a group per loop turn; arm the timer again for any that came since. */
  private async saveDue(): Promise<void> {
    const due = [...this.waiting];
    for (let first = 0; first < due.length; first += END_SAVES_PER_GROUP) {
      if (first > 0) await new Promise((resolve) => setImmediate(resolve));
      const group = due.slice(first, first + END_SAVES_PER_GROUP).filter((live) => this.waiting.has(live));
      await Promise.all(group.map((live) => this.now(live)));
    }
    this.timer = undefined;
    if (this.waiting.size > 0) this.arm();
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
