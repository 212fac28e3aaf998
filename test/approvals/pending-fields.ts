/**
 * The fields every pending item shares (approval, plan, question), for tests that build items
 * directly: a pending item of Ana's in a Slack channel, created on 2 January, expiring a day later.
 */
import type { ThreadTarget } from "../../src/core/thread-target.js";

/** The common fields of a pending item, with `overrides` (e.g. another requester or target). */
export function pendingFields(
  overrides: {
    readonly id?: string;
    readonly target?: ThreadTarget;
    readonly requester?: { readonly platform: string; readonly userId: string; readonly name: string };
  } = {},
) {
  const requester = overrides.requester ?? { platform: "slack", userId: "U1", name: "Ana" };
  return {
    id: overrides.id ?? "AbCdEfGhIjKlMnOpQrSt",
    sessionId: "s1",
    target: overrides.target ?? { platform: "slack", workspace: "T1", channel: "C1" },
    callId: "c1",
    argsHash: "h",
    requester,
    allowedApprovers: [`${requester.platform}:${requester.userId}`],
    createdAt: "2026-01-02T03:04:05.000Z",
    expiresAt: "2026-01-03T03:04:05.000Z",
    status: "pending" as const,
  };
}
