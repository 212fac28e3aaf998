/**
 * The files one step's calls will write, foreseen before any of them runs, for the reviewer's
 * facts. Every call of a step is authorised before the first one runs (tool-scheduler.ts), so when
 * the reviewer judges `bash build.sh`, the call just before it that writes build.sh has no result
 * in the history yet: callFacts (review-input.ts), which reads written files from results, would
 * say nothing, and the agent's own fresh script would read as the project's. What a call writes is
 * read from its arguments: a path tool's write (grant key "path": write_file, edit_file) names its
 * file in `path`. step-downloads.ts does the same for what a step's commands download.
 */
import { type AnyTool, callCategory } from "../../core/tool.js";
import { pathOf } from "../permissions/permission-engine.js";

/** The file a call writes, as its arguments name it, or undefined when it writes none by path. */
export function writtenPathOf(tool: AnyTool, args: Readonly<Record<string, unknown>>): string | undefined {
  const path = pathOf(tool, args);
  return path !== undefined && callCategory(tool, args) === "write" ? path : undefined;
}

/**
 * For the step's call at each index, the files the calls before it write (they run before it:
 * writes never run beside other calls), the nearest first. `written`: what each call of the step
 * writes (writtenPathOf), undefined for none. The step is read once: all of its writes, last
 * first, end with the ones of the calls before any call, so each call's files are their tail.
 */
export function stepWrittenFiles(
  written: readonly (string | undefined)[],
): (index: number) => readonly string[] {
  const nearestFirst: string[] = [];
  const before: number[] = [];
  for (const path of written) {
    before.push(nearestFirst.length);
    if (path !== undefined) nearestFirst.push(path);
  }
  nearestFirst.reverse();
  return (index) => nearestFirst.slice(nearestFirst.length - (before[index] ?? nearestFirst.length));
}
