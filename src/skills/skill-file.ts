/**
 * Reading and writing SKILL.md: the front matter is split off by gray-matter (a maintained
 * front-matter parser) with the project's `yaml` package as its YAML engine, validated with zod,
 * and checked against the folder's name. Writing produces the same format, so a skill saved here
 * loads unchanged in other agents. gray-matter (with its own js-yaml and esprima) loads with the
 * first SKILL.md read, so a workspace without skills never loads it. Front matter over 16 KB, with
 * more than 64 flow brackets, or indented deeper than 32 levels, is refused before it is parsed:
 * the YAML parsers recurse per level, so a hostile file could otherwise block the process for
 * seconds and overflow the stack.
 */
import { createRequire } from "node:module";
import type matter from "gray-matter";
import YAML from "yaml";
import { z } from "zod";
import { skillNameSchema } from "./skill-name.js";

/** Largest front matter parsed, in characters. */
const FRONT_MATTER_MAX = 16 * 1024;
/** Deepest indentation of the front matter parsed, in steps of two columns. */
const FRONT_MATTER_MAX_DEPTH = 32;
/**
 * Most flow brackets (`[`, `{`) in the front matter parsed, wherever they are: they bound its flow
 * nesting, which counting closing brackets cannot (a `]` may be quoted text, and which quotes are
 * quotes depends on the whole YAML grammar).
 */
const FRONT_MATTER_MAX_BRACKETS = 64;

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
 * Why the front matter of `text` (up to its closing `---`, else the whole text) is too large or may
 * be too deeply nested to parse safely; undefined when it is not. Flow nesting is bounded by the
 * count of opening brackets (quoted text included, which only over-counts), indentation by its
 * steps of two columns.
 */
function frontMatterRefusal(text: string): string | undefined {
  const end = text.search(/\r?\n---[ \t]*(\r?\n|$)/);
  const front = end === -1 ? text : text.slice(0, end);
  if (front.length > FRONT_MATTER_MAX)
    return `the front matter is over ${FRONT_MATTER_MAX / 1024} KB (keep long text in the body)`;
  let brackets = 0;
  for (const char of front) if (char === "[" || char === "{") brackets++;
  if (brackets > FRONT_MATTER_MAX_BRACKETS)
    return `the front matter has more than ${FRONT_MATTER_MAX_BRACKETS} flow brackets ([ or {)`;
  let deepest = 0;
  for (const line of front.split("\n")) {
    const indent = line.length - line.trimStart().length;
    deepest = Math.max(deepest, Math.ceil(indent / 2));
  }
  return deepest > FRONT_MATTER_MAX_DEPTH
    ? `the front matter is indented deeper than ${FRONT_MATTER_MAX_DEPTH} levels`
    : undefined;
}

/**
 * Parse a SKILL.md's text. `folderName` is the name of the folder holding it: the front matter's
 * `name` must match it. Never throws: a malformed file comes back with the reason.
 */
export function parseSkillFile(text: string, folderName: string): ParsedSkillFile {
  if (!/^\uFEFF?---\r?\n/.test(text))
    return { ok: false, reason: "no YAML front matter (the file must start with ---)" };
  const tooComplex = frontMatterRefusal(text);
  if (tooComplex !== undefined) return { ok: false, reason: tooComplex };
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
