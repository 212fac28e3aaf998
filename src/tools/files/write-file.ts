/**
 * write_file {path, content}: create or overwrite a workspace text file (parent directories are
 * created). The approval card shows a unified diff against the current content (not read when it
 * is over the text tools' size limit), or the whole new content when that diff is too large. The bytes land swap-safely: temp file + rename in the same
 * directory, never through a symlink or hard link. A steering file (`.coworker/`, AGENTS.md) is
 * written only with a person's approval, in every mode (steering-files.ts). Of uploads/, only the
 * caller's conversation's folders can be written (conversation-paths.ts).
 */
import { z } from "zod";
import { formatBytes } from "../../core/attachment.js";
import { defineTool, ok, type ToolPreview } from "../../core/tool.js";
import { readIfExists, writeChecked } from "./anchored-fs.js";
import type { ConversationWorkspace } from "./conversation-workspace.js";
import { contentFingerprint } from "./content-fingerprint.js";
import { countLines, NO_DIFF_NOTE, unifiedDiff } from "./diff-preview.js";
import { fileErrorMessage } from "./fs-errors.js";
import { onWorkspaceWrite } from "./on-workspace-path.js";
import { pathOnCard, reasonOnCard } from "./path-on-card.js";
import { DEFAULT_MAX_FILE_BYTES } from "./read-file.js";
import { decodeText } from "./text-file.js";
import type { ResolvedPath } from "./workspace-paths.js";

/** Dependencies of write_file. */
export interface WriteFileOptions {
  /** The files written, in each caller's conversation view (conversation-workspace.ts). */
  readonly workspace: ConversationWorkspace;
  /** Larger current files are not read for the diff (default 20 MB). */
  readonly maxFileBytes?: number;
}

const writeFileSchema = z.object({
  path: z.string().min(1).describe("File path, relative to the workspace root"),
  content: z.string().describe("The complete new content of the file"),
});

/**
 * A file as it is now: its bytes (undefined when it does not exist, its size unread when it is over
 * `maxBytes`) and its text (null when it is not text).
 */
async function currentFile(
  file: ResolvedPath,
  maxBytes: number,
): Promise<{
  readonly bytes: Buffer | number | undefined;
  readonly text: string | number | null | undefined;
}> {
  const bytes = await readIfExists(file, maxBytes);
  if (bytes === undefined || typeof bytes === "number") return { bytes, text: bytes };
  const decoded = decodeText(bytes);
  return { bytes, text: decoded.kind === "text" ? decoded.text : null };
}

/** Build the write_file tool. */
export function createWriteFileTool(options: WriteFileOptions) {
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  return defineTool({
    name: "write_file",
    description:
      "Create a file or replace its whole content. Parent directories are created. " +
      "For small changes to an existing file prefer edit_file.",
    inputSchema: writeFileSchema,
    category: "write",
    risk: "medium",
    concurrent: false,
    // The card shows a diff against the file as it was: a changed file must not be overwritten unseen.
    bindsPreview: true,
    grantKey: "path",
    label: (args) => args.path,
    async execute(args, context) {
      return onWorkspaceWrite(options.workspace, args.path, context, async (file) => {
        const shown = file.display;
        const existed = await writeChecked(file, args.content);
        const size = `${countLines(args.content)} lines, ${Buffer.byteLength(args.content)} bytes`;
        return ok(`${existed ? "Overwrote" : "Created"} ${shown} (${size}).`, [shown]);
      });
    },
    async preview(args, context): Promise<ToolPreview> {
      try {
        const file = await options.workspace.forRequest(context.request).resolve(args.path);
        const { bytes, text: before } = await currentFile(file, maxFileBytes);
        // What the write replaces and with what, whatever the card can show of it. A file too large
        // to read is bound by its size alone.
        const fingerprint = contentFingerprint(["write_file", file.display, bytes, args.content]);
        if (before === null) {
          return {
            summary: `Replace binary file ${pathOnCard(file.display)} with ${countLines(args.content)} lines of text`,
            fingerprint,
          };
        }
        if (typeof before === "number") {
          return {
            summary: `Replace ${pathOnCard(file.display)} (${formatBytes(before)}, too large to compare) with ${countLines(args.content)} lines of text`,
            fingerprint,
          };
        }
        const verb = before === undefined ? "Create" : "Overwrite";
        const lines = countLines(args.content);
        const diff = await unifiedDiff(file.display, before, args.content);
        if (diff === undefined)
          return {
            summary: `${verb} ${pathOnCard(file.display)} with the ${lines} lines below (${NO_DIFF_NOTE})`,
            detail: { kind: "code", text: args.content },
            fingerprint,
          };
        return {
          summary: `${verb} ${pathOnCard(file.display)} (${lines} lines)`,
          detail: { kind: "diff", text: diff },
          fingerprint,
        };
      } catch (error) {
        const failure = fileErrorMessage(error, args.path);
        return {
          summary: `Write ${pathOnCard(args.path)} — will fail: ${reasonOnCard(failure)}`,
          fingerprint: contentFingerprint(["write_file", args.path, "fails", failure, args.content]),
        };
      }
    },
  });
}
