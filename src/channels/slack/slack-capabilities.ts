/**
 * What this workspace turned out not to support, remembered per conversation kind: native
 * streaming (chat.startStream) and the assistant thread status. The first refusal latches the
 * feature off for that kind (DMs and channels differ: streaming outside DMs needs a recipient),
 * so later turns go straight to the fallback; the latch expires after an hour in case the
 * workspace enables the feature.
 */
import { slackErrorCode } from "./slack-api.js";
import type { ConversationKind } from "./slack-conversation-kind.js";

export type Feature = "stream" | "status";

/** Failures that say nothing about support: the next try may well work. */
const TRANSIENT = new Set([
  "ratelimited",
  "internal_error",
  "fatal_error",
  "service_unavailable",
  "request_timeout",
]);

/** Whether a failure is transient (rate limit, server trouble, network) rather than a refusal. */
export function isTransientFailure(error: unknown): boolean {
  const code = slackErrorCode(error);
  return code === undefined || TRANSIENT.has(code);
}

export class CapabilityLatch {
  private readonly off = new Map<string, { until: number; reason: string }>();

  constructor(
    private readonly ttlMs = 60 * 60 * 1_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether the feature is latched off for this kind. */
  isOff(feature: Feature, kind: ConversationKind): boolean {
    const entry = this.off.get(`${feature}:${kind}`);
    if (!entry) return false;
    if (entry.until <= this.now()) {
      this.off.delete(`${feature}:${kind}`);
      return false;
    }
    return true;
  }

  /** Latch the feature off for this kind (the reason is kept for debugging). */
  turnOff(feature: Feature, kind: ConversationKind, reason: string): void {
    this.off.set(`${feature}:${kind}`, { until: this.now() + this.ttlMs, reason });
  }
}
