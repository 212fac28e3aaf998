/**
 * SkillSavers: who asked for each skill saved through save_skill (platform-qualified, as
 * approvals name people), kept in the store's "skills" space under `saver:<name>` so every process
 * knows it. The saver of a skill may always switch it off (skill-authority.ts): whoever put a skill
 * in every conversation's catalog can take it out again without waiting for an approver. A later
 * save under the same name records its own saver.
 */
import type { KeyValueSpace } from "../store/store.js";

function saverKey(name: string): string {
  return `saver:${name}`;
}

/** The recorded savers of skills (see the module header). */
export class SkillSavers {
  /** Without a space (no store), the records live in memory. */
  private readonly local = new Map<string, string>();

  constructor(private readonly space?: KeyValueSpace) {}

  /** Record `saver` ("slack:U0123") as the one who asked for the skill `name`. */
  async record(name: string, saver: string): Promise<void> {
    if (this.space) await this.space.set(saverKey(name), saver);
    else this.local.set(name, saver);
  }

  /** Who asked for the skill `name`, when it was saved through save_skill and recorded. */
  async saverOf(name: string): Promise<string | undefined> {
    if (!this.space) return this.local.get(name);
    const saver = await this.space.get<unknown>(saverKey(name));
    return typeof saver === "string" ? saver : undefined;
  }
}
