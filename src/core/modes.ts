/** Permission modes a session can be in; shared by the engine, sessions and channels. */
import { z } from "zod";

export const PERMISSION_MODES = ["interactive", "auto", "plan", "discuss", "reviewed"] as const;
export const permissionModeSchema = z.enum(PERMISSION_MODES);
/**
 * interactive: reads run, risky tools ask · auto: all but hard denies run · plan / discuss: read-only ·
 * reviewed: like interactive, but a safety reviewer model decides each ask first (src/engine/reviewer).
 */
export type PermissionMode = z.infer<typeof permissionModeSchema>;

/** How much a mode lets run unasked: read-only modes least, then interactive, reviewed (a model may clear asks), auto most. */
const LATITUDE: Readonly<Record<PermissionMode, number>> = {
  plan: 0,
  discuss: 0,
  interactive: 1,
  reviewed: 2,
  auto: 3,
};

/** Whether switching from `from` to `to` lets more run without asking (a less safe mode). */
export function loosensMode(from: PermissionMode, to: PermissionMode): boolean {
  return LATITUDE[to] > LATITUDE[from];
}
