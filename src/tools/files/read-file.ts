/**
 * read_file {path, offset?, limit?}: a workspace text file with line numbers, paged for large
 * files (a marker says how many lines remain and which offset continues); binary files refused.
 * An image (PNG, JPEG, GIF, WebP) is described and attached to the result, so a vision model
 * sees it (the engine adapts the attachment per model call). Of uploads/, only the caller's
 * conversation's folders can be read (conversation-paths.ts).
 */
import { basename } from "node:path";
import { z } from "zod";
import { describeImage, formatBytes } from "../../core/attachment.js";
import { type ImageProbe, judgeImageHandle } from "../../media/image-probe.js";
import { clipWithMarker } from "../../core/surrogate-pairs.js";
import { defineTool, fail, ok } from "../../core/tool.js";
import type { ConversationWorkspace } from "./conversation-workspace.js";
import { onWorkspacePath } from "./on-workspace-path.js";
import { readTextFile, splitLines } from "./text-file.js";
import { openChecked } from "./anchored-fs.js";
import type { ResolvedPath } from "./workspace-paths.js";

/** Limits for read_file. */
export interface ReadFileOptions {
  /** The files read, in each caller's conversation view (conversation-workspace.ts). */
  readonly workspace: ConversationWorkspace;
  /** Lines returned when no limit is given, and the largest limit accepted (default 2000). */
  readonly maxLines?: number;
  /** Longer lines are cut with a marker (default 2000 characters). */
  readonly maxLineChars?: number;
  /** Files above this size are refused (default 20 MB). */
  readonly maxFileBytes?: number;
}

export const DEFAULT_MAX_FILE_BYTES = 20 * 1024 * 1024;

const readFileSchema = z.object({
  path: z.string().min(1).describe("File path, relative to the workspace root"),
  offset: z.number().int().min(1).optional().describe("First line to show (1-based, default 1)"),
  limit: z.number().int().min(1).optional().describe("How many lines to show"),
});

/** Render lines `cat -n` style, starting at line number `first`. */
export function numberLines(lines: readonly string[], first: number, maxLineChars: number): string {
  const width = String(first + lines.length - 1).length;
  return lines
    .map((line, index) => {
      const shown = clipWithMarker(
        line,
        maxLineChars,
        (dropped) => `… [line cut, ${dropped} more characters]`,
      );
      return `${String(first + index).padStart(width, " ")}\t${shown}`;
    })
    .join("\n");
}

/** Build the read_file tool. */
export function createReadFileTool(options: ReadFileOptions) {
  const maxLines = options.maxLines ?? 2000;
  const maxLineChars = options.maxLineChars ?? 2000;
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  return defineTool({
    name: "read_file",
    description:
      "Read a text file from the workspace. Lines are numbered; large files come in pages — " +
      "pass offset (1-based line) and limit to read further. Images (PNG, JPEG, GIF, WebP) are " +
      "shown to you when your model can see images. Other binary files are refused.",
    inputSchema: readFileSchema,
    category: "read",
    risk: "low",
    concurrent: true,
    label(args) {
      if (args.offset === undefined && args.limit === undefined) return args.path;
      const first = args.offset ?? 1;
      const last = args.limit === undefined ? "" : String(first + args.limit - 1);
      return `${args.path}:${first}-${last}`;
    },
    async execute(args, context) {
      return onWorkspacePath(options.workspace.forRequest(context.request), args.path, async (file) => {
        const shown = file.display;
        const probe = await probeCheckedImage(file, { path: shown, name: basename(shown) });
        if (probe && !probe.usable)
          return ok(
            `${shown} is an image (${probe.mediaType}, ${formatBytes(probe.bytes)}) that is not attached: ${probe.reason}, too large to show safely. A smaller copy (made with a tool that checks the size first) could be.`,
          );
        if (probe) {
          const { image } = probe;
          return {
            ok: true,
            output: `${shown} is an image (${image.mediaType}, ${describeImage(image)}, ${formatBytes(image.bytes)}). It is attached below when this model can see images; otherwise only this description is available.`,
            attachments: [image],
          };
        }
        const lines = splitLines(await readTextFile(file, maxFileBytes));
        if (lines.length === 0) return ok(`${shown} is empty.`);
        const first = args.offset ?? 1;
        if (first > lines.length) {
          return fail(`${shown} has ${lines.length} lines; offset ${first} is past the end.`);
        }
        const count = Math.min(args.limit ?? maxLines, maxLines);
        const page = lines.slice(first - 1, first - 1 + count);
        const next = first + page.length;
        const remaining = lines.length - (next - 1);
        const marker = remaining > 0 ? `\n… ${remaining} more lines, use offset=${next} to continue.` : "";
        return ok(numberLines(page, first, maxLineChars) + marker);
      });
    },
  });
}

/** The image verdict on a checked workspace file, opened swap-safely; undefined when it is not a viewable image. */
async function probeCheckedImage(
  file: ResolvedPath,
  shown: { readonly path: string; readonly name: string },
): Promise<ImageProbe | undefined> {
  const { handle, stats } = await openChecked(file);
  try {
    if (!stats.isFile()) return undefined;
    return await judgeImageHandle(handle, { ...shown, bytes: stats.size });
  } finally {
    await handle.close();
  }
}
