/**
 * SkillSwitches: which skills are on for the workspace. Config sets the baseline — `skills.enabled`
 * (when non-empty, only these are on) and `skills.disabled` (these are off) — and a configured
 * approver's `/skills enable|disable <name>` overrides it for the workspace, persisted in the
 * store as one key per skill (`switch:<name>`), so a switch written by one process never
 * overwrites another's switch of another skill. Every process re-reads the stored switches of the
 * skills it found on each scan (`refresh`), so a switch made anywhere holds everywhere from the
 * next scan on; the per-turn catalog then reads them synchronously. A stored switch that cannot be
 * read counts as off (and is logged): a damaged store never turns a disabled skill back on. A
 * refresh whose read began before this process's own later switch keeps that switch: what it read
 * is older.
 * Switches stored by older versions as one map under `switches` still count where a skill has no
 * key of its own.
 */
import { z } from "zod";
import type { Logger } from "../logging/logger.js";
import { getAll, type KeyValueSpace } from "../store/store.js";

/** The config baseline. */
export interface SkillSwitchConfig {
  readonly enabled: readonly string[];
  readonly disabled: readonly string[];
}

/** Where a skill's current on/off state comes from. */
export type SwitchOrigin = "default" | "config" | "override";

const legacySchema = z.record(z.string(), z.boolean());
/** Where older versions kept every override, as one map. */
const LEGACY_KEY = "switches";

function switchKey(name: string): string {
  return `switch:${name}`;
}

/** The per-workspace on/off state of skills (see the module header). */
export class SkillSwitches {
  private changes = 0;
  private overrides: ReadonlyMap<string, boolean> = new Map();
  /** How many switches `set` has stored, and at which of those counts each skill was last set. */
  private sets = 0;
  private readonly lastSet = new Map<string, number>();

  private constructor(
    private readonly config: SkillSwitchConfig,
    private readonly space: KeyValueSpace | undefined,
    private readonly logger: Pick<Logger, "warn"> | undefined,
  ) {}

  /**
   * Switches over the config and the store's `space` (without one nothing persists); the stored
   * switches are read by `refresh`.
   */
  static async open(
    config: SkillSwitchConfig,
    space?: KeyValueSpace,
    logger?: Pick<Logger, "warn">,
  ): Promise<SkillSwitches> {
    return new SkillSwitches(config, space, logger);
  }

  /**
   * Read the stored switches of `names` (the skills a scan found) from the store, replacing what
   * was read before; throws when the store cannot be asked, so the scan fails rather than showing
   * skills whose switches are unknown.
   */
  async refresh(names: readonly string[]): Promise<void> {
    if (!this.space || names.length === 0) return;
    const startedAt = this.sets;
    const [legacyValue, ...values] = await getAll<unknown>(this.space, [LEGACY_KEY, ...names.map(switchKey)]);
    const legacy = legacySchema.safeParse(legacyValue ?? {});
    if (!legacy.success)
      this.logger?.warn(
        { key: LEGACY_KEY },
        "skills: the stored skill switches cannot be read; skills without a switch of their own stay off",
      );
    const next = new Map<string, boolean>();
    names.forEach((name, index) => {
      const value = values[index];
      if (typeof value === "boolean") next.set(name, value);
      else if (value !== undefined) {
        this.logger?.warn(
          { skill: name },
          "skills: a stored skill switch cannot be read; the skill stays off",
        );
        next.set(name, false);
      } else if (!legacy.success) next.set(name, false);
      else if (Object.hasOwn(legacy.data, name)) next.set(name, legacy.data[name]!);
      // This process's own switch made since the read began is newer than what was read.
      const local = this.overrides.get(name);
      if ((this.lastSet.get(name) ?? 0) > startedAt && local !== undefined) next.set(name, local);
    });
    if (!sameSwitches(this.overrides, next)) this.changes++;
    this.overrides = next;
  }

  /** Whether the skill is on, and why. */
  stateOf(name: string): { readonly enabled: boolean; readonly origin: SwitchOrigin } {
    const override = this.overrides.get(name);
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
    await this.space?.set(switchKey(name), enabled);
    this.overrides = new Map([...this.overrides, [name, enabled]]);
    this.sets++;
    this.lastSet.set(name, this.sets);
    this.changes++;
  }
}

function sameSwitches(a: ReadonlyMap<string, boolean>, b: ReadonlyMap<string, boolean>): boolean {
  return a.size === b.size && [...a].every(([name, value]) => b.get(name) === value);
}
