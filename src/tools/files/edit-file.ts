/**
 * edit_file {path, old_text, new_text}: replace one exact, unique occurrence of old_text. Not
 * found and found-more-than-once are clear errors; the approval card shows the unified diff.
 * The new text lands swap-safely (temp file + rename, no hard links; see anchored-fs.ts). A
 * steering file (`.coworker/`, AGENTS.md) is edited only with a person's approval, in every mode
 * (steering-files.ts). Of uploads/, only the caller's conversation's folders can be edited
 * (conversation-paths.ts).
 */
import { z } from "zod";
import { defineTool, fail, ok, type ToolPreview } from "../../core/tool.js";
import { writeChecked } from "./anchored-fs.js";
import type { ConversationWorkspace } from "./conversation-workspace.js";
import { contentFingerprint } from "./content-fingerprint.js";
import { countLines, NO_DIFF_NOTE, unifiedDiff } from "./diff-preview.js";
import { fileErrorMessage } from "./fs-errors.js";
import { onWorkspaceWrite } from "./on-workspace-path.js";
import { pathOnCard, reasonOnCard } from "./path-on-card.js";
import { DEFAULT_MAX_FILE_BYTES } from "./read-file.js";
import { readTextFile } from "./text-file.js";

/** Dependencies of edit_file. */
export interface EditFileOptions {
  /** The files edited, in each caller's conversation view (conversation-workspace.ts). */
  readonly workspace: ConversationWorkspace;
  readonly maxFileBytes?: number;
}

const editFileSchema = z.object({
  path: z.string().min(1).describe("File path, relative to the workspace root"),
  old_text: z.string().describe("Exact text to replace; must occur exactly once in the file"),
  new_text: z.string().describe("Replacement text"),
});

type EditArgs = z.infer<typeof editFileSchema>;

/** The outcome of planning an edit on a file's text. */
export type PlannedEdit =
  | { readonly ok: true; readonly after: string; readonly line: number }
  | { readonly ok: false; readonly error: string };

/** Count occurrences of `needle` (non-overlapping) in `haystack`. */
function countOccurrences(haystack: string, needle: string): number {
  let count = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) {
    count += 1;
  }
  return count;
}

/** Apply an exact unique replacement to `before`, or explain why it cannot be applied. */
export function planEdit(before: string, args: EditArgs, shownPath: string): PlannedEdit {
  if (args.old_text === "") return { ok: false, error: "old_text is empty; give the exact text to replace" };
  if (args.old_text === args.new_text) return { ok: false, error: "old_text and new_text are identical" };
  const count = countOccurrences(before, args.old_text);
  if (count === 0) {
    return {
      ok: false,
      error: `old_text was not found in ${shownPath}; it must match exactly, including whitespace and indentation (read_file shows the current text)`,
    };
  }
  if (count > 1) {
    return {
      ok: false,
      error: `old_text was found ${count} times in ${shownPath}; include more surrounding lines so it matches exactly once`,
    };
  }
  const at = before.indexOf(args.old_text);
  const after = before.slice(0, at) + args.new_text + before.slice(at + args.old_text.length);
  return { ok: true, after, line: before.slice(0, at).split("\n").length };
}

/** Build the edit_file tool. */
export function createEditFileTool(options: EditFileOptions) {
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  return defineTool({
    name: "edit_file",
    description:
      "Replace one exact occurrence of old_text with new_text in a file. old_text must match " +
      "exactly once (whitespace included); add surrounding lines to make it unique.",
    inputSchema: editFileSchema,
    category: "write",
    risk: "medium",
    concurrent: false,
    // The card shows a diff against the file as it was: a changed file must not be edited unseen.
    bindsPreview: true,
    grantKey: "path",
    label: (args) => args.path,
    async execute(args, context) {
      return onWorkspaceWrite(options.workspace, args.path, context, async (file) => {
        const shown = file.display;
        const before = await readTextFile(file, maxFileBytes);
        const edit = planEdit(before, args, shown);
        if (!edit.ok) return fail(edit.error);
        await writeChecked(file, edit.after);
        return ok(`Edited ${shown} at line ${edit.line}.`, [shown]);
      });
    },
    async preview(args, context): Promise<ToolPreview> {
      try {
        const file = await options.workspace.forRequest(context.request).resolve(args.path);
        const before = await readTextFile(file, maxFileBytes);
        const edit = planEdit(before, args, file.display);
        if (!edit.ok)
          return {
            summary: `Edit ${pathOnCard(file.display)} — will fail: ${reasonOnCard(edit.error)}`,
            fingerprint: contentFingerprint(["edit_file", file.display, "fails", edit.error]),
          };
        // The file's text before and after, whatever the card can show of it.
        const fingerprint = contentFingerprint(["edit_file", file.display, before, edit.after]);
        const diff = await unifiedDiff(file.display, before, edit.after);
        if (diff === undefined) {
          const replaced = `${countLines(args.old_text)} lines with the ${countLines(args.new_text)} lines below`;
          return {
            summary: `Edit ${pathOnCard(file.display)} at line ${edit.line}: replace ${replaced} (${NO_DIFF_NOTE})`,
            detail: { kind: "code", text: args.new_text },
            fingerprint,
          };
        }
        return {
          summary: `Edit ${pathOnCard(file.display)} at line ${edit.line}`,
          detail: { kind: "diff", text: diff },
          fingerprint,
        };
      } catch (error) {
        const failure = fileErrorMessage(error, args.path);
        return {
          summary: `Edit ${pathOnCard(args.path)} — will fail: ${reasonOnCard(failure)}`,
          fingerprint: contentFingerprint([
            "edit_file",
            args.path,
            "fails",
            failure,
            args.old_text,
            args.new_text,
          ]),
        };
      }
    },
  });
}
