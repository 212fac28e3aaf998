/** Permission modes a session can be in; shared by the engine, sessions and channels. */
import { z } from "zod";

export const PERMISSION_MODES = ["interactive", "auto", "plan", "discuss"] as const;
export const permissionModeSchema = z.enum(PERMISSION_MODES);
/** interactive: reads run, risky tools ask · auto: all but hard denies run · plan / discuss: read-only. */
export type PermissionMode = z.infer<typeof permissionModeSchema>;

/** How much a mode lets run unasked: read-only modes least, auto most. */
const LATITUDE: Readonly<Record<PermissionMode, number>> = { plan: 0, discuss: 0, interactive: 1, auto: 2 };

/** Whether switching from `from` to `to` lets more run without asking (a less safe mode). */
export function loosensMode(from: PermissionMode, to: PermissionMode): boolean {
  return LATITUDE[to] > LATITUDE[from];
}
