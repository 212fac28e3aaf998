/**
 * What a save says: the card a person approves it on, and the result the model reads after. The
 * card shows the whole SKILL.md and each bundled file (a copied executable one says so); over an
 * existing skill it says "Replace the existing skill", never just "Save"; under a name the data dir
 * or `skills.dirs` holds it says the saved skill will be hidden by that one. Its fingerprint covers
 * exactly what the save writes and where, so an approval binds that plan. The result says whether
 * the saved skill is in the catalog, hidden or switched off — or that this cannot be read now: the
 * standing comes from the store, and a store out of reach must not make a written skill read as
 * unsaved, nor break its card.
 */
import { SKILL_FILE } from "../core/workspace-layout.js";
import type { ToolPreview } from "../core/tool.js";
import { contentFingerprint } from "../tools/files/content-fingerprint.js";
import type { SkillStanding } from "./skill-library.js";
import type { SavePlan } from "./skill-save-plan.js";
import { sourceLabel } from "./skill.js";

/** Where a skill stands, none when nobody asks, or "unknown" when it could not be read now. */
export type ReadStanding = SkillStanding | { readonly kind: "unknown" } | undefined;

/**
 * Where the skill `name` stands, by `lookup` (SkillLibrary.standingOf; undefined: nobody asks),
 * "unknown" when that fails: a scan reads the switches from the store.
 */
export async function readStanding(
  lookup: ((name: string) => Promise<SkillStanding>) | undefined,
  name: string,
): Promise<ReadStanding> {
  try {
    return await lookup?.(name);
  } catch {
    return { kind: "unknown" };
  }
}

/** The card of a save: the whole SKILL.md and every bundled file, fingerprinted (fingerprintOf). */
export function previewOf(plan: SavePlan, standing: ReadStanding): ToolPreview {
  const { name } = plan.document;
  const verb = plan.existing ? `Replace the existing skill "${name}"` : `Save the new skill "${name}"`;
  const sections = [`${plan.shownDir}/${SKILL_FILE}\n${plan.skillFile}`];
  for (const file of plan.files)
    sections.push(`${plan.shownDir}/${file.path}${file.executable ? " (executable)" : ""}\n${file.content}`);
  return {
    summary: `${verb} in ${plan.shownDir}/ (${plan.files.length + 1} file${plan.files.length === 0 ? "" : "s"})${hiddenNote(name, standing)}`,
    detail: { kind: "code", text: sections.join("\n\n") },
    fingerprint: fingerprintOf(plan),
  };
}

/** The fingerprint of exactly what a save writes, and where (ToolPreview.fingerprint). */
function fingerprintOf(plan: SavePlan): string {
  const files = plan.files.flatMap((file) => [file.path, file.executable ? 1 : 0, file.content]);
  return contentFingerprint(["save_skill", plan.dir, plan.existing ? 1 : 0, plan.skillFile, ...files]);
}

/** What the card adds when the saved skill would not be the one used, or that this is unknown. */
function hiddenNote(name: string, standing: ReadStanding): string {
  if (standing?.kind === "unknown")
    return " — whether another source's skill of the name would hide it could not be read now";
  return standing?.kind === "operator"
    ? ` — it will be hidden: the ${sourceLabel(standing.source)}'s skill "${name}" is the one listed and loaded`
    : "";
}

/**
 * The result of a save that was written: what was saved or replaced, where, which files, and the
 * saved skill's place in the catalog (`standing`, read after the write).
 */
export function savedText(plan: SavePlan, standing: ReadStanding): { text: string; written: string[] } {
  const { name } = plan.document;
  const written = [
    `${plan.shownDir}/${SKILL_FILE}`,
    ...plan.files.map((file) => `${plan.shownDir}/${file.path}`),
  ];
  return {
    text: `${plan.existing ? "Replaced" : "Saved"} the skill "${name}" in ${plan.shownDir}/ (${written.length} file${written.length === 1 ? "" : "s"}). ${standingText(name, standing)}`,
    written,
  };
}

/** What the result says of the saved skill's place in the catalog. */
function standingText(name: string, standing: ReadStanding): string {
  switch (standing?.kind) {
    case undefined:
      return "It is in the catalog from the next turn.";
    case "unknown":
      return "It is saved; its place in the catalog could not be read now.";
    case "operator":
      return `It is hidden: the ${sourceLabel(standing.source)}'s skill "${name}" is the one listed and loaded, as long as that one is there.`;
    case "missing":
      return "It does not load (`coworker doctor` says why).";
    case "workspace":
      return standing.enabled
        ? "It is in the catalog from the next turn."
        : `It is switched off for this workspace: a configured approver turns it on with \`skills enable ${name}\`.`;
  }
}
