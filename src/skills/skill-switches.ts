/**
 * SkillSwitches: which skills are on for the workspace. Config sets the baseline — `skills.enabled`
 * (when non-empty, only these are on) and `skills.disabled` (these are off) — and a configured
 * approver's `/skills enable|disable <name>` overrides it for the workspace, persisted in the
 * store. The overrides are kept in memory once loaded so the per-turn catalog reads them
 * synchronously; every change writes through to the store first.
 */
import { z } from "zod";
import type { KeyValueSpace } from "../store/store.js";

/** The config baseline. */
export interface SkillSwitchConfig {
  readonly enabled: readonly string[];
  readonly disabled: readonly string[];
}

/** Where a skill's current on/off state comes from. */
export type SwitchOrigin = "default" | "config" | "override";

const overridesSchema = z.record(z.string(), z.boolean());
const OVERRIDES_KEY = "switches";

/** The per-workspace on/off state of skills (see the module header). */
export class SkillSwitches {
  private changes = 0;

  private constructor(
    private readonly config: SkillSwitchConfig,
    private readonly space: KeyValueSpace | undefined,
    private overrides: Readonly<Record<string, boolean>>,
  ) {}

  /** Load the persisted overrides (unreadable data counts as none). Without a space nothing persists. */
  static async open(config: SkillSwitchConfig, space?: KeyValueSpace): Promise<SkillSwitches> {
    const stored = overridesSchema.safeParse(await space?.get(OVERRIDES_KEY));
    return new SkillSwitches(config, space, Object.freeze(stored.success ? stored.data : {}));
  }

  /** Whether the skill is on, and why. */
  stateOf(name: string): { readonly enabled: boolean; readonly origin: SwitchOrigin } {
    const override = Object.hasOwn(this.overrides, name) ? this.overrides[name] : undefined;
    if (override !== undefined) return { enabled: override, origin: "override" };
    if (this.config.disabled.includes(name)) return { enabled: false, origin: "config" };
    if (this.config.enabled.length > 0)
      return { enabled: this.config.enabled.includes(name), origin: "config" };
    return { enabled: true, origin: "default" };
  }

  /** Grows with every change (lets callers keep what they derived from the switches). */
  get version(): number {
    return this.changes;
  }

  /** Whether the skill is on. */
  isEnabled(name: string): boolean {
    return this.stateOf(name).enabled;
  }

  /** Turn a skill on or off for the workspace; resolves once stored. */
  async set(name: string, enabled: boolean): Promise<void> {
    const next = Object.freeze({ ...this.overrides, [name]: enabled });
    await this.space?.set(OVERRIDES_KEY, next);
    this.overrides = next;
    this.changes++;
  }
}
