/**
 * SkillSavers: who asked for each skill saved through save_skill (platform-qualified, as
 * approvals name people), with a fingerprint of what they saved, kept in the store's "skills"
 * space under `saver:<name>` so every process knows it. The saver of a skill may switch it off
 * (skill-commands.ts) while the skill in use under that name is the very workspace skill they
 * saved: whoever put a skill in every conversation's catalog can take it out again without waiting
 * for an approver — but never another skill of that name (the data dir's, `skills.dirs`', one
 * written since by hand). A later save under the same name replaces the record.
 */
import { z } from "zod";
import type { KeyValueSpace } from "../store/store.js";
import { contentFingerprint } from "../tools/files/content-fingerprint.js";
import type { SkillDocument } from "./skill-file.js";
import type { SkillEntry } from "./skill-library.js";

function saverKey(name: string): string {
  return `saver:${name}`;
}

/** Who saved a skill and what: `fingerprint` is skillFingerprint of the saved document. */
const savedBySchema = z.object({ saver: z.string(), fingerprint: z.string() });
export type SavedBy = z.infer<typeof savedBySchema>;

/** The fingerprint of a skill's name, description and instructions, as saved or as loaded. */
function skillFingerprint(document: Pick<SkillDocument, "name" | "description" | "body">): string {
  return contentFingerprint(["skill", document.name, document.description, document.body]);
}

/**
 * Whether `saver` ("slack:U0123") saved the skill `entry` is: it is the workspace's, and what they
 * saved. A record from before fingerprints were kept (a bare id) names nobody.
 */
export function savedSkillOf(record: SavedBy | undefined, saver: string, entry: SkillEntry): boolean {
  return (
    record !== undefined &&
    record.saver === saver &&
    entry.skill.source.kind === "workspace" &&
    record.fingerprint === skillFingerprint(entry.skill)
  );
}

/** The recorded savers of skills (see the module header). */
export class SkillSavers {
  /** Without a space (no store), the records live in memory. */
  private readonly local = new Map<string, SavedBy>();

  constructor(private readonly space?: KeyValueSpace) {}

  /** Record `saver` ("slack:U0123") as the one who saved `document` as the skill of its name. */
  async record(document: SkillDocument, saver: string): Promise<void> {
    const record: SavedBy = { saver, fingerprint: skillFingerprint(document) };
    if (this.space) await this.space.set(saverKey(document.name), record);
    else this.local.set(document.name, record);
  }

  /** Who saved the skill `name` and what, when it was saved through save_skill and recorded. */
  async savedBy(name: string): Promise<SavedBy | undefined> {
    if (!this.space) return this.local.get(name);
    const record = savedBySchema.safeParse(await this.space.get<unknown>(saverKey(name)));
    return record.success ? record.data : undefined;
  }
}
