/**
 * list_files {path?, depth?}: a depth-limited listing of a workspace directory (directories end
 * in "/", symlinks show "@" and are not followed), skipping node_modules, .git and the service's
 * own files and other conversations' uploads (WorkspacePaths.hidden, conversation-paths.ts), capped.
 * Each level is read through the directory opened above it, so a swapped folder cannot redirect it.
 * Of each folder at most `maxFolderEntries` entries are read (and sorted): reading and sorting all
 * of a folder a command filled with 300,000 files held the event loop — every chat — for over a
 * second, and millions take as many more; the listing says which folders were read in part.
 */
import type { Dirent } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { defineTool, fail, ok } from "../../core/tool.js";
import { type AnchoredDir, FOLDER_ENTRIES_READ, openChecked, openCheckedDir } from "./anchored-fs.js";
import type { ConversationWorkspace } from "./conversation-workspace.js";
import { onWorkspacePath } from "./on-workspace-path.js";

/** Directory names never descended into or listed by the workspace tools. */
export const SKIPPED_DIRECTORIES: ReadonlySet<string> = new Set(["node_modules", ".git"]);

/** Limits for list_files. */
export interface ListFilesOptions {
  /** The folders listed, in each caller's conversation view (conversation-workspace.ts). */
  readonly workspace: ConversationWorkspace;
  /** Most entries listed (default 500). */
  readonly maxEntries?: number;
  /** Most entries of one folder read (default 10,000). */
  readonly maxFolderEntries?: number;
  /** Depth used when none is given (default 2) and the deepest allowed (default 8). */
  readonly defaultDepth?: number;
  readonly maxDepth?: number;
}

const listFilesSchema = z.object({
  path: z
    .string()
    .min(1)
    .optional()
    .describe("Directory, relative to the workspace root (default: the root)"),
  depth: z.number().int().min(1).optional().describe("How many levels to descend (default 2)"),
});

/** Locale-independent name order (by UTF-16 code units), the same on every machine. */
export function compareNames(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

function entryLabel(entry: Dirent): string {
  if (entry.isSymbolicLink()) return `${entry.name}@`;
  if (entry.isDirectory()) return `${entry.name}/`;
  return entry.name;
}

/** What a listing adds about the folders read in part (`crowded`, relative to the one listed), or "". */
function crowdedNote(crowded: readonly string[], maxFolderEntries: number): string {
  if (crowded.length === 0) return "";
  const names = crowded.map((folder) => (folder === "" ? "this folder" : `${folder}/`)).join(", ");
  return `\n… ${names}: over ${maxFolderEntries} entries, so only ${maxFolderEntries} of them (the first the file system gave, not by name) were read; use run_command (ls | head, find) to look further.`;
}

/** Build the list_files tool. */
export function createListFilesTool(options: ListFilesOptions) {
  const maxEntries = options.maxEntries ?? 500;
  const maxFolderEntries = options.maxFolderEntries ?? FOLDER_ENTRIES_READ;
  const defaultDepth = options.defaultDepth ?? 2;
  const maxDepth = options.maxDepth ?? 8;
  return defineTool({
    name: "list_files",
    description:
      "List files and directories in the workspace (directories end in '/', symlinks in '@'), " +
      "descending `depth` levels. node_modules and .git are skipped.",
    inputSchema: listFilesSchema,
    category: "read",
    risk: "low",
    concurrent: true,
    label: (args) => args.path ?? ".",
    async execute(args, context) {
      const requested = args.path ?? ".";
      const paths = options.workspace.forRequest(context.request);
      return onWorkspacePath(paths, requested, async (dir) => {
        const shown = dir.display;
        const opened = await openChecked(dir);
        await opened.handle.close();
        if (!opened.stats.isDirectory()) {
          return fail(`${shown} is a file, not a directory; use read_file to read it.`);
        }
        const depth = Math.min(args.depth ?? defaultDepth, maxDepth);
        const lines: string[] = [];
        let omitted = 0;
        /** The folders (relative, "" the listed one) of which only maxFolderEntries entries were read. */
        const crowded: string[] = [];
        const hidden = await paths.hidden();
        const walk = async (open: AnchoredDir, relative: string, level: number): Promise<void> => {
          const { entries: read, more } = await open.someEntries(maxFolderEntries);
          if (more) crowded.push(relative);
          const entries = read
            .filter((entry) => !SKIPPED_DIRECTORIES.has(entry.name))
            .filter((entry) => !hidden(path.join(dir.absolute, relative, entry.name)))
            .sort(compareNames);
          for (const entry of entries) {
            if (lines.length >= maxEntries) {
              omitted += 1;
              continue;
            }
            const label = entryLabel(entry);
            const childRelative = relative ? `${relative}/${entry.name}` : entry.name;
            lines.push(`${relative ? `${relative}/` : ""}${label}`);
            if (entry.isDirectory() && level + 1 < depth) {
              const child = await open.openDir(entry.name, childRelative);
              try {
                await walk(child, childRelative, level + 1);
              } finally {
                await child.close();
              }
            }
          }
        };
        const top = await openCheckedDir(dir);
        try {
          await walk(top, "", 0);
        } finally {
          await top.close();
        }
        if (lines.length === 0) return ok(`${shown} is empty.`);
        const header = `${shown === "." ? "workspace root" : shown}:`;
        const footer =
          omitted > 0
            ? `\n… at least ${omitted} more entries not shown; list a subdirectory or use a lower depth.`
            : "";
        return ok(`${header}\n${lines.join("\n")}${footer}${crowdedNote(crowded, maxFolderEntries)}`);
      });
    },
  });
}
