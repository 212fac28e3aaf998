/**
 * The skill catalog: the compact list of skill names and descriptions that rides in every turn's
 * context (never the bodies — those come with `load_skill`). It is capped at a token budget
 * (tokens approximated as characters / 4); skills that do not fit are counted in a final
 * "…and N more" line, so the cost per turn stays bounded however many skills are installed.
 */
import { clipLine } from "../core/one-line.js";
import type { Skill } from "./skill.js";

/** Default catalog budget, in approximate tokens. */
export const DEFAULT_CATALOG_BUDGET_TOKENS = 2_000;
/** Longest description shown in the catalog, in characters. */
export const CATALOG_DESCRIPTION_MAX = 200;

const HEADER =
  "Skills (reusable instructions): when a request matches one, call `load_skill` with its name and follow what it says. Available skills:";

/** Approximate token count of a text (characters / 4, rounded up). */
export function approxTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

function lineOf(skill: Pick<Skill, "name" | "description">): string {
  return `- ${skill.name}: ${clipLine(skill.description, CATALOG_DESCRIPTION_MAX)}`;
}

function moreLine(count: number): string {
  return `…and ${count} more skill${count === 1 ? "" : "s"} not listed here (people can see them all with the skills command).`;
}

/**
 * The catalog text for these skills (sorted by name), within `budgetTokens`; undefined when there
 * are none. The header and the "…and N more" line count against the budget too.
 */
export function catalogText(
  skills: readonly Pick<Skill, "name" | "description">[],
  budgetTokens: number = DEFAULT_CATALOG_BUDGET_TOKENS,
): string | undefined {
  if (skills.length === 0) return undefined;
  const sorted = [...skills].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const budgetChars = budgetTokens * 4;
  const lines = [HEADER];
  let used = HEADER.length;
  for (let i = 0; i < sorted.length; i++) {
    const line = lineOf(sorted[i]!);
    const rest = sorted.length - i - 1;
    const reserve = rest > 0 ? 1 + moreLine(rest).length : 0;
    if (used + 1 + line.length + reserve > budgetChars) {
      if (i === 0 && used + 1 + moreLine(sorted.length).length > budgetChars) return undefined;
      lines.push(moreLine(sorted.length - i));
      return lines.join("\n");
    }
    lines.push(line);
    used += 1 + line.length;
  }
  return lines.join("\n");
}
