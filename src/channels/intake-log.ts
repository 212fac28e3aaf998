/**
 * IntakeLog: how a channel reports inbound payloads it refused (malformed frames, bodies and
 * updates, events from outside the installation). Each refused item is logged exactly once with
 * its kind: the first of a kind as a warning, later ones of that kind at debug level with a
 * running count, so a flood of garbage cannot flood the log while the first occurrence is never
 * missed. It never throws. Also the one answer every channel gives a press of a button it does
 * not act on (an old card, a stray client, a malformed payload).
 */
import type { Logger } from "pino";

/** What a person is told after pressing a button this version does not act on. */
export const INACTIVE_BUTTON = "This button is no longer active.";

/** Kinds whose count is kept; beyond that, further kinds share one bucket (bounded memory). */
const MAX_KINDS = 100;
const OTHER_KIND = "other";

export class IntakeLog {
  private readonly counts = new Map<string, number>();

  constructor(private readonly logger: Logger) {}

  /** Record one refused item of `kind` (e.g. "socket_frame", "events_api", "external_team"). */
  refused(kind: string, detail: Readonly<Record<string, unknown>> = {}): void {
    const key = this.counts.has(kind) || this.counts.size < MAX_KINDS ? kind : OTHER_KIND;
    const count = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, count);
    try {
      const fields = { ...detail, kind, count };
      if (count === 1) this.logger.warn(fields, "inbound payload refused");
      else this.logger.debug(fields, "inbound payload refused");
    } catch {
      // A logger that fails must not turn garbage into a crash.
    }
  }
}
