/** Permission modes a session can be in; shared by the engine, sessions and channels. */
import { z } from "zod";

export const PERMISSION_MODES = ["interactive", "auto", "plan", "discuss", "reviewed"] as const;
export const permissionModeSchema = z.enum(PERMISSION_MODES);
/**
 * interactive: reads run, risky tools ask · auto: all but hard denies run · plan / discuss: read-only ·
 * reviewed: like interactive, but a safety reviewer model decides each ask first (src/engine/reviewer).
 */
export type PermissionMode = z.infer<typeof permissionModeSchema>;
