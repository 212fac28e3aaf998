/**
 * Who may decide a pending approval or answer a question: the person whose turn asked, plus the
 * configured approvers — global or per channel, always platform-qualified ("slack:U0123",
 * "telegram:4567") so an id on one platform never authorises someone on another.
 */
import { z } from "zod";
import type { ThreadTarget } from "../sessions/contracts.js";

const qualifiedId = z
  .string()
  .trim()
  .regex(/^[a-z][a-z0-9_-]*:[^\s:][^\s]*$/, 'approver ids are platform-qualified, e.g. "slack:U0123"');

export const approvalsConfigSchema = z.object({
  approvers: z.array(qualifiedId).readonly(),
  /** Keyed "platform:channel", e.g. "slack:C0123". */
  perChannel: z
    .record(
      z.string().regex(/^[a-z][a-z0-9_-]*:.+$/, 'per-channel keys are "platform:channel"'),
      z.array(qualifiedId),
    )
    .optional(),
  ttlMs: z.number().int().positive(),
});
export interface ApprovalsConfig {
  readonly approvers: readonly string[];
  readonly perChannel?: Readonly<Record<string, readonly string[]>>;
  readonly ttlMs: number;
}

/** "slack" + "U0123" → "slack:U0123". */
export function qualifiedUserId(platform: string, userId: string): string {
  return `${platform}:${userId}`;
}

/**
 * Everyone allowed to decide an item raised in `target` on behalf of `requesterId`: the requester
 * first, then global approvers, then this channel's approvers, without duplicates.
 */
export function allowedApproversFor(
  config: Pick<ApprovalsConfig, "approvers" | "perChannel">,
  target: ThreadTarget,
  requesterId: string,
): readonly string[] {
  const channelKey = `${target.platform}:${target.channel}`;
  const all = [
    qualifiedUserId(target.platform, requesterId),
    ...config.approvers,
    ...(config.perChannel?.[channelKey] ?? []),
  ];
  return Object.freeze([...new Set(all)]);
}

/** Whether the presser (platform + platform user id) is on the item's allowed list. */
export function mayDecide(allowed: readonly string[], platform: string, userId: string): boolean {
  return allowed.includes(qualifiedUserId(platform, userId));
}

/** Parse COWORKER_APPROVERS ("slack:U1, telegram:42") into validated ids; throws naming the bad entry. */
export function parseApproversEnv(value: string | undefined): readonly string[] {
  const entries = (value ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  return entries.map((entry) => {
    const parsed = qualifiedId.safeParse(entry);
    if (!parsed.success)
      throw new Error(`COWORKER_APPROVERS: "${entry}" is not a platform-qualified id such as "slack:U0123"`);
    return parsed.data;
  });
}
