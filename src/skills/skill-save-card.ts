/**
 * What a save says: the card a person approves it on, and the result the model reads after. The
 * card shows the whole SKILL.md and each bundled file (a copied executable one says so); over an
 * existing skill it says "Replace the existing skill", never just "Save"; under a name the data dir
 * or `skills.dirs` holds it says the saved skill will be hidden by that one. Its fingerprint covers
 * exactly what the save writes and where, so an approval binds that plan. The result says whether
 * the saved skill is in the catalog, hidden or switched off — or that this cannot be read now: the
 * standing comes from the store, and a store out of reach must not make a written skill read as
 * unsaved, nor break its card. A card cuts a long text and posts the whole of it beside itself, up
 * to CARD_TEXT_MAX characters as it shows them; a save whose card would be longer (a SKILL.md and
 * twenty bundled files of 256 KB each make some 5.5 million) is refused (cardSizeRefusal), since
 * part of what it writes could not be read before it is approved.
 */
import { groupedCount } from "../core/count-text.js";
import { HIDDEN_CHARACTERS } from "../core/hidden-characters.js";
import { MAX_REPLY_CHARS } from "../core/messages.js";
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

/**
 * The longest card text of a save, in characters as the card shows it: the most a card posts whole
 * beside itself when it cuts it (channels/shared/card-attachment.ts: twice a reply's length).
 */
const CARD_TEXT_MAX = 2 * MAX_REPLY_CHARS;

/** The card's text of a save: the whole SKILL.md, then each bundled file, each under its path. */
function cardText(plan: SavePlan): string {
  const sections = [`${plan.shownDir}/${SKILL_FILE}\n${plan.skillFile}`];
  for (const file of plan.files)
    sections.push(`${plan.shownDir}/${file.path}${file.executable ? " (executable)" : ""}\n${file.content}`);
  return sections.join("\n\n");
}

/**
 * `text`'s length as a card shows it: each hidden character (all of them in the Basic Multilingual
 * Plane) written out as its code point in eight characters, "[U+2067]" or "⟨U+200B⟩". They are
 * counted as what removing them takes away: a list of them (`match`) would be a string each, and a
 * save of some 1.8 million made that 87 MB and half a second of the event loop, on its card and again
 * when run.
 */
function shownLength(text: string): number {
  return text.length + 7 * (text.length - text.replace(HIDDEN_CHARACTERS, "").length);
}

/**
 * Why a save may not be approved on a card, undefined when it may: its card would be longer than
 * a card can post whole beside itself, so part of what it writes would go unread.
 */
export function cardSizeRefusal(plan: SavePlan): string | undefined {
  const length = shownLength(cardText(plan));
  if (length <= CARD_TEXT_MAX) return undefined;
  return (
    `its card would be ${groupedCount(length)} characters, over the ${groupedCount(CARD_TEXT_MAX)} a card can show whole, ` +
    "so nobody could read all of it before approving: bundle fewer or smaller files, " +
    "or leave them in the workspace and have the instructions name their paths"
  );
}

/** The card of a save: the whole SKILL.md and every bundled file, fingerprinted (fingerprintOf). */
export function previewOf(plan: SavePlan, standing: ReadStanding): ToolPreview {
  const { name } = plan.document;
  const verb = plan.existing ? `Replace the existing skill "${name}"` : `Save the new skill "${name}"`;
  return {
    summary: `${verb} in ${plan.shownDir}/ (${plan.files.length + 1} file${plan.files.length === 0 ? "" : "s"})${hiddenNote(name, standing)}`,
    detail: { kind: "code", text: cardText(plan) },
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
