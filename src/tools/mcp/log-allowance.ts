/**
 * LogAllowance: how much of what one MCP server makes the service log reaches the log. A server
 * is not trusted with the log: one writing short stderr lines, or invalid lines on stdout (each a
 * transport error), without end filled the log a line each, drowning everything else and the
 * disk. Up to `burst` lines pass at once and `perSecond` after that; the lines beyond are counted,
 * and the next line that passes says how many were left out.
 */

/** Lines that pass at once before the rate applies. */
const DEFAULT_BURST = 20;
/** Lines that pass per second once the burst is spent. */
const DEFAULT_PER_SECOND = 5;

/** One verdict: whether this line is logged, and how many lines were left out since the last that was. */
export interface LogVerdict {
  readonly pass: boolean;
  readonly notLogged: number;
}

/** A token bucket over one server's log lines (see the module header). */
export class LogAllowance {
  private tokens: number;
  private refilledAt: number;
  private notLogged = 0;

  constructor(
    private readonly burst = DEFAULT_BURST,
    private readonly perSecond = DEFAULT_PER_SECOND,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = burst;
    this.refilledAt = now();
  }

  /** Ask to log one line now. */
  take(): LogVerdict {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.refilledAt) / 1_000) * this.perSecond);
    this.refilledAt = now;
    if (this.tokens < 1) {
      this.notLogged += 1;
      return { pass: false, notLogged: this.notLogged };
    }
    this.tokens -= 1;
    const notLogged = this.notLogged;
    this.notLogged = 0;
    return { pass: true, notLogged };
  }
}
