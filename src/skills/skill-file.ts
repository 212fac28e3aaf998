/**
 * Reading and writing SKILL.md: the front matter is split off by gray-matter (a maintained
 * front-matter parser) with the project's `yaml` package as its YAML engine, validated with zod,
 * and checked against the folder's name. Writing produces the same format, so a skill saved here
 * loads unchanged in other agents. gray-matter (with its own js-yaml and esprima) loads with the
 * first SKILL.md read, so a workspace without skills never loads it.
 */
import { createRequire } from "node:module";
import type matter from "gray-matter";
import YAML from "yaml";
import { z } from "zod";
import { skillNameSchema } from "./skill-name.js";

/** Longest description, in characters (the catalog shows descriptions every turn). */
export const DESCRIPTION_MAX = 1_024;

const yamlEngine = {
  parse: (input: string): object => (YAML.parse(input) as object | null) ?? {},
  stringify: (data: object): string => YAML.stringify(data),
};

const frontMatterSchema = z.looseObject({
  name: skillNameSchema,
  description: z
    .string({ error: "the front matter needs a `description`" })
    .trim()
    .min(1, "the front matter needs a non-empty `description`")
    .max(DESCRIPTION_MAX, `the description has at most ${DESCRIPTION_MAX} characters`),
  license: z.string().optional(),
  "allowed-tools": z
    .union([z.string(), z.array(z.string())])
    .transform((value) => (typeof value === "string" ? value.split(/[\s,]+/).filter(Boolean) : value))
    .optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

/** What a SKILL.md says, once valid. */
export interface SkillDocument {
  readonly name: string;
  readonly description: string;
  readonly license?: string;
  readonly allowedTools?: readonly string[];
  readonly metadata?: Readonly<Record<string, unknown>>;
  /** The Markdown instructions after the front matter. */
  readonly body: string;
}

export type ParsedSkillFile =
  | { readonly ok: true; readonly document: SkillDocument }
  | { readonly ok: false; readonly reason: string };

/** gray-matter, loaded on first use (it is CommonJS, so parsing stays synchronous). */
function loadMatter(): typeof matter {
  return createRequire(import.meta.url)("gray-matter") as typeof matter;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const key = issue.path.map(String).join(".");
  if (issue.code === "invalid_type" && issue.input === undefined)
    return key === "name" ? "the front matter needs a `name`" : `the front matter needs a \`${key}\``;
  return key ? `${key}: ${issue.message}` : issue.message;
}

/**
 * Parse a SKILL.md's text. `folderName` is the name of the folder holding it: the front matter's
 * `name` must match it. Never throws: a malformed file comes back with the reason.
 */
export function parseSkillFile(text: string, folderName: string): ParsedSkillFile {
  if (!/^\uFEFF?---\r?\n/.test(text))
    return { ok: false, reason: "no YAML front matter (the file must start with ---)" };
  let file: matter.GrayMatterFile<string>;
  try {
    file = loadMatter()(text, { engines: { yaml: yamlEngine }, language: "yaml" });
  } catch (error) {
    return {
      ok: false,
      reason: `bad front matter: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`,
    };
  }
  if (typeof file.data !== "object" || file.data === null || Array.isArray(file.data))
    return { ok: false, reason: "bad front matter: it must be a YAML mapping" };
  const parsed = frontMatterSchema.safeParse(file.data);
  if (!parsed.success) return { ok: false, reason: parsed.error.issues.map(describeIssue).join("; ") };
  const front = parsed.data;
  if (front.name !== folderName)
    return { ok: false, reason: `the name "${front.name}" does not match its folder "${folderName}"` };
  return {
    ok: true,
    document: {
      name: front.name,
      description: front.description,
      ...(front.license === undefined ? {} : { license: front.license }),
      ...(front["allowed-tools"] === undefined ? {} : { allowedTools: front["allowed-tools"] }),
      ...(front.metadata === undefined ? {} : { metadata: front.metadata }),
      body: file.content.replace(/^\r?\n/, "").trimEnd(),
    },
  };
}

/** The text of a SKILL.md with this name, description and instructions. */
export function renderSkillFile(document: Pick<SkillDocument, "name" | "description" | "body">): string {
  const front = YAML.stringify({ name: document.name, description: document.description }).trimEnd();
  return `---\n${front}\n---\n\n${document.body.trim()}\n`;
}
