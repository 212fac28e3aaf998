/**
 * The rules a file bundled with a saved skill (save_skill's `files`) must meet, its path and its
 * content, and why:
 * - The approval card must show exactly what is written: a path has one spelling (relative, no
 *   `./`, `..`, `//`, backslash or dot-file), and no control character, line or paragraph
 *   separator, or character that hides or reorders text (core/hidden-characters.ts); a file is
 *   given inline or copied, never both.
 * - A file system must be able to hold it: at most 255 bytes a name and 1 KB a path; no two paths
 *   a case-folding file system takes for one name (listed twice); no path that is another's
 *   folder (`a` and `a/b`), nor SKILL.md, in any case, or below it; at most SAVED_FILE_MAX_BYTES a
 *   file and SAVED_FILES_MAX files.
 * - It must be removable again: at most SAVED_PATH_FOLDERS_MAX folders deep (AnchoredDir.removeDir).
 * - It names no credential file: the file tools' rule (credential-paths.ts).
 */
import path from "node:path";
import { z } from "zod";
import { hidesText } from "../core/hidden-characters.js";
import { oneLine } from "../core/one-line.js";
import { SKILL_FILE } from "../core/workspace-layout.js";
import { refuseCredentialPath } from "../tools/files/credential-paths.js";

/** Most files bundled with one saved skill. */
export const SAVED_FILES_MAX = 20;
/** Largest bundled file, in bytes. */
export const SAVED_FILE_MAX_BYTES = 256 * 1024;

/** Deepest folder nesting of a bundled file, so every saved folder can be removed (AnchoredDir.removeDir). */
const SAVED_PATH_FOLDERS_MAX = 10;
/** Longest name of one folder or file of a bundled path, in bytes (the file systems' own limit). */
const SAVED_NAME_MAX_BYTES = 255;
/** Longest bundled path, in bytes. */
const SAVED_PATH_MAX_BYTES = 1024;

/**
 * Characters a bundled path may not hold, because the card shows the path: what is not one line
 * (core/one-line.ts: control characters and line or paragraph separators would write lines of
 * their own into the card), and the characters that hide or reorder the text around them
 * (core/hidden-characters.ts, the set the channels reveal).
 */
function spoofsTheCard(value: string): boolean {
  return oneLine(value) !== value || hidesText(value);
}

/**
 * A path in its one spelling: relative, no `.`, `..` or empty part, no dot-file, not SKILL.md in
 * any case (on a case-folding file system skill.md is the SKILL.md written after it).
 */
function isPlainRelative(value: string): boolean {
  const parts = value.split("/");
  return (
    !path.isAbsolute(value) &&
    !value.includes("\\") &&
    path.posix.normalize(value) === value &&
    !parts.some((part) => part === "" || part.startsWith(".")) &&
    value.toLowerCase() !== SKILL_FILE.toLowerCase()
  );
}

const relativeFile = z
  .string()
  .min(1)
  .refine((value) => !spoofsTheCard(value), {
    message: "no control characters or text-direction marks in a file's path",
  })
  .refine(isPlainRelative, {
    message: `a plain relative path inside the skill's folder (no ./, .., // or dot-files, not ${SKILL_FILE})`,
  })
  .refine(
    (value) =>
      Buffer.byteLength(value) <= SAVED_PATH_MAX_BYTES &&
      value.split("/").length <= SAVED_PATH_FOLDERS_MAX + 1 &&
      value.split("/").every((part) => Buffer.byteLength(part) <= SAVED_NAME_MAX_BYTES),
    {
      message: `at most ${SAVED_PATH_FOLDERS_MAX} folders deep, ${SAVED_NAME_MAX_BYTES} bytes a name and ${SAVED_PATH_MAX_BYTES} bytes in all`,
    },
  );

/** One bundled file as save_skill takes it: its path, and its text or the workspace file to copy. */
export const bundledFileSchema = z
  .object({
    path: relativeFile.describe(
      "Where the file goes, relative to the skill's folder (e.g. scripts/check.sh)",
    ),
    content: z
      .string()
      .refine((value) => Buffer.byteLength(value) <= SAVED_FILE_MAX_BYTES, {
        message: `at most ${SAVED_FILE_MAX_BYTES / 1024} KB (in UTF-8) a bundled file`,
      })
      .optional()
      .describe("The file's text"),
    from: z.string().min(1).optional().describe("Or: a workspace path to copy the file from"),
  })
  .refine((file) => (file.content === undefined) !== (file.from === undefined), {
    message: "give exactly one of `content` or `from`",
  });

/**
 * The checks of a save's bundled paths taken together, in the skill's folder `dir` (shown as
 * `shownDir`) of the skills folder `skillsRoot`: `list` each path as it is planned (listed twice,
 * credential file), then `refuseFolderClash` once all are listed.
 */
export class BundledPathCheck {
  // SKILL.md is written too: no bundled path may go below it.
  private readonly listed = new Map([[nameKey(SKILL_FILE), SKILL_FILE]]);

  constructor(
    private readonly dir: string,
    private readonly skillsRoot: string,
    private readonly shownDir: string,
  ) {}

  /** Refuse `file` when it is listed already, or names a credential file. */
  list(file: string): void {
    // One file under two spellings a case-folding file system takes for one name is listed twice too.
    const key = nameKey(file);
    if (this.listed.has(key)) throw new Error(`the file ${file} is listed twice`);
    this.listed.set(key, file);
    // The file tools' rule for credential files: a skill bundles no key or secrets file either.
    refuseCredentialPath(path.join(this.dir, file), this.skillsRoot, `${this.shownDir}/${file}`);
  }

  /**
   * Refuse a bundled path that is a folder of another (`a` and `a/b`, SKILL.md and `SKILL.md/x`):
   * one of the two could not be written.
   */
  refuseFolderClash(): void {
    for (const [key, file] of this.listed) {
      const parts = key.split("/");
      for (let depth = 1; depth < parts.length; depth++) {
        const folder = this.listed.get(parts.slice(0, depth).join("/"));
        if (folder !== undefined)
          throw new Error(
            `the file ${folder} would have to be the folder of ${file} too; give one of them another path`,
          );
      }
    }
  }
}

/** The key under which a case-folding file system takes `file` for one name. */
function nameKey(file: string): string {
  return file.normalize("NFC").toLowerCase();
}
