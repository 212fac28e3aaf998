/**
 * search_files {pattern, path?, glob?}: regex search across the workspace, answered by ripgrep
 * when it is on PATH and by a JS walk otherwise (also for a single file, which the JS engine
 * opens swap-safely); results are capped with a marker. Neither engine returns lines from
 * credential files (credential-paths.ts) or from another conversation's uploads
 * (conversation-paths.ts); ripgrep is also told to skip those folders, so it does not read them.
 * The JS engine (with RE2JS) loads the first time it is needed. The glob is capped in length and
 * wildcards for both engines, and both refuse the brace forms ripgrep has no one meaning for
 * (glob-braces.ts).
 */
import { z } from "zod";
import { clipWithMarker } from "../../core/surrogate-pairs.js";
import { defineTool, fail, ok } from "../../core/tool.js";
import { openChecked } from "./anchored-fs.js";
import type { ConversationWorkspace } from "./conversation-workspace.js";
import { fileErrorMessage } from "./fs-errors.js";
import { braceProblem } from "./glob-braces.js";
import { DEFAULT_MAX_FILE_BYTES } from "./read-file.js";
import {
  RipgrepMissingError,
  type SearchMatch,
  type SearchQuery,
  SearchQueryError,
  searchWithRipgrep,
} from "./search-backends.js";
import type { JsSearchLimits } from "./search-js.js";
import type { ResolvedPath } from "./workspace-paths.js";

/** Limits and engine choice for search_files. */
export interface SearchFilesOptions {
  /** The files searched, in each caller's conversation view (conversation-workspace.ts). */
  readonly workspace: ConversationWorkspace;
  /** Most matches returned (default 200). */
  readonly maxResults?: number;
  /** Matching lines are cut to this length (default 300). */
  readonly maxLineChars?: number;
  /** false forces the JS engine even when rg is installed (default true). */
  readonly useRipgrep?: boolean;
  /** The ripgrep binary (default "rg", looked up on PATH). */
  readonly ripgrepCommand?: string;
  /** Larger files are skipped by the JS engine (default 20 MB). */
  readonly maxFileBytes?: number;
  /** Line cap, time limit and pacing of the JS engine. */
  readonly jsLimits?: JsSearchLimits;
}

/**
 * Longest pattern accepted: the JS engine compiles it on the event loop, and RE2JS took 1.5 s over
 * a 44,000-character one (search-js.ts bounds what a compiled pattern costs per line).
 */
const MAX_PATTERN_CHARS = 1000;

/** Longest glob accepted. */
const MAX_GLOB_CHARS = 200;
/** Most wildcards (`*` runs, `?`, `[`, `{`) in a glob. */
const MAX_GLOB_WILDCARDS = 16;

const wildcardCount = (glob: string): number => glob.match(/\*+|[?[{]/g)?.length ?? 0;

const searchFilesSchema = z.object({
  pattern: z
    .string()
    .min(1)
    .max(MAX_PATTERN_CHARS, `a pattern has at most ${MAX_PATTERN_CHARS} characters`)
    .describe("Regular expression to search for"),
  path: z.string().min(1).optional().describe("Directory or file to search (default: the workspace root)"),
  glob: z
    .string()
    .min(1)
    .max(MAX_GLOB_CHARS, `a glob has at most ${MAX_GLOB_CHARS} characters`)
    .refine((glob) => wildcardCount(glob) <= MAX_GLOB_WILDCARDS, {
      message: `a glob has at most ${MAX_GLOB_WILDCARDS} wildcards (*, **, ?, [ and { each count)`,
    })
    .optional()
    .describe("Only files matching this glob, e.g. '*.ts' or 'src/**/*.md'"),
});

/** Whether a checked path is a directory (opened the swap-safe way). */
async function isDirectory(target: ResolvedPath): Promise<boolean> {
  const { handle, stats } = await openChecked(target);
  await handle.close();
  return stats.isDirectory();
}

/** Build the search_files tool. */
export function createSearchFilesTool(options: SearchFilesOptions) {
  const maxResults = options.maxResults ?? 200;
  const maxLineChars = options.maxLineChars ?? 300;
  let ripgrepAvailable = options.useRipgrep ?? true;

  /** `hiddenPaths`: the paths `query.hidden` hides inside the target, for ripgrep to skip up front. */
  const run = async (query: SearchQuery, hiddenPaths: readonly string[]): Promise<SearchMatch[]> => {
    if (ripgrepAvailable && (await isDirectory(query.target))) {
      try {
        return await searchWithRipgrep({ ...query, hiddenPaths }, options.ripgrepCommand);
      } catch (error) {
        if (!(error instanceof RipgrepMissingError)) throw error;
        ripgrepAvailable = false;
      }
    }
    const { searchWithJs } = await import("./search-js.js");
    return searchWithJs(query, options.jsLimits);
  };

  return defineTool({
    name: "search_files",
    description:
      "Search file contents in the workspace with a regular expression. Returns matching lines " +
      "as path:line: text. Narrow with path (a directory or file) and glob (e.g. '*.py').",
    inputSchema: searchFilesSchema,
    category: "read",
    risk: "low",
    concurrent: true,
    label(args) {
      const where = args.path === undefined ? "" : ` in ${args.path}`;
      return `${args.pattern}${where}${args.glob === undefined ? "" : ` (${args.glob})`}`;
    },
    async execute(args, context) {
      const refused = args.glob === undefined ? undefined : braceProblem(args.glob);
      if (refused !== undefined) return fail(`search failed: ${refused}`);
      const requested = args.path ?? ".";
      const paths = options.workspace.forRequest(context.request);
      let shown = requested;
      try {
        const target = await paths.resolve(requested);
        shown = target.display;
        const { hidden, within } = await paths.hidingIn(target.absolute);
        const matches = await run(
          {
            pattern: args.pattern,
            target,
            glob: args.glob,
            limit: maxResults,
            maxFileBytes: options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
            hidden,
            signal: context.signal,
          },
          within,
        );
        if (matches.length === 0) return ok(`No matches for /${args.pattern}/ in ${shown}.`);
        const lines = await Promise.all(
          matches.slice(0, maxResults).map(async (match) => {
            const text = clipWithMarker(match.text, maxLineChars, () => "…");
            const line = match.line === undefined ? "" : `:${match.line}`;
            return `${await paths.display(match.file)}${line}: ${text}`;
          }),
        );
        const more =
          matches.length > maxResults
            ? `\n… more matches not shown (first ${maxResults} listed); narrow the pattern, path or glob.`
            : "";
        return ok(lines.join("\n") + more);
      } catch (error) {
        if (error instanceof SearchQueryError) return fail(`search failed: ${error.message}`);
        return fail(fileErrorMessage(error, shown));
      }
    },
  });
}
