/**
 * The repository's root folder: the nearest folder holding package.json above this module. Test
 * support runs from its sources (vitest, tsx) and, for the benchmarks, from the compiled copy under
 * .bench-build/ (which has no package.json); paths built from here name the same files either way.
 */
import { existsSync } from "node:fs";
import path from "node:path";

function rootAbove(folder: string): string {
  for (let dir = folder; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, "package.json"))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${folder}`);
  }
}

export const REPO_ROOT = rootAbove(import.meta.dirname);
