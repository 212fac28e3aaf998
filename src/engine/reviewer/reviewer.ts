/**
 * Reviewer: judges one proposed tool call — builds the request from a ReviewInput, calls the
 * reviewer model under a timeout, and parses the verdict. It never throws and never returns
 * anything a caller must interpret: an unparsable answer, a timeout or a provider error becomes
 * an "unsure" verdict (a person decides), with the failure named for the audit log. Every verdict
 * is reported to `observe` (metrics).
 */
import { type ReviewInput, reviewMessages } from "./review-input.js";
import type { ReviewerModel } from "./reviewer-model.js";
import { parseVerdict, type ReviewerVerdict } from "./verdict.js";

/** Live verdicts decide; shadow verdicts are only recorded next to a person's decision. */
export type ReviewStage = "live" | "shadow";

export interface ReviewerOptions {
  readonly model: ReviewerModel;
  /** Give up (verdict "unsure") after this long. */
  readonly timeoutMs: number;
  /** Hears every verdict (metrics). Its failures are ignored. */
  readonly observe?: (verdict: ReviewerVerdict, stage: ReviewStage) => void;
  readonly now?: () => number;
}

const FAILURE_REASON = {
  unparsable: "the reviewer's answer was not a readable verdict",
  timeout: "the reviewer did not answer in time",
  error: "the reviewer could not be reached",
} as const;

/** The safety reviewer shared by every session (see the module header). */
export class Reviewer {
  private readonly now: () => number;

  constructor(private readonly options: ReviewerOptions) {
    this.now = options.now ?? (() => performance.now());
  }

  /** Judge one call; `signal` (the turn's) stops the request early, which also yields "unsure". */
  async review(input: ReviewInput, stage: ReviewStage, signal?: AbortSignal): Promise<ReviewerVerdict> {
    const started = this.now();
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.options.timeoutMs);
    const onAbort = () => controller.abort();
    signal?.addEventListener("abort", onAbort, { once: true });
    let verdict: ReviewerVerdict;
    try {
      const reply = await this.options.model.complete(reviewMessages(input), controller.signal);
      const parsed = parseVerdict(reply.text);
      const cost = { tokensIn: reply.tokensIn, tokensOut: reply.tokensOut, latencyMs: this.now() - started };
      verdict = parsed
        ? { ...parsed, ...cost }
        : { verdict: "unsure", reason: FAILURE_REASON.unparsable, failure: "unparsable", ...cost };
    } catch {
      const failure = timedOut ? "timeout" : "error";
      verdict = {
        verdict: "unsure",
        reason: FAILURE_REASON[failure],
        failure,
        tokensIn: 0,
        tokensOut: 0,
        latencyMs: this.now() - started,
      };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
    try {
      this.options.observe?.(verdict, stage);
    } catch {
      // Metrics are best effort.
    }
    return Object.freeze({ ...verdict, latencyMs: Math.round(verdict.latencyMs * 100) / 100 });
  }
}
