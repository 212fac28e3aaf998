/**
 * Real paths for containment checks: "does this path lie inside that folder?" must compare where
 * things really are, so both sides are resolved with every link followed — also for paths that do
 * not exist yet (a file about to be written, a folder not made yet), whose missing tail is kept
 * as written below the real path of the part that exists, and for dangling links, followed to
 * where they point (so a link to a missing file outside is seen as outside). One algorithm, run
 * on node:fs (for the configuration check at load) or on node:fs/promises (for the tools);
 * isWithin is the one containment test for the resolved paths.
 */
import { readlinkSync, realpathSync } from "node:fs";
import { readlink, realpath } from "node:fs/promises";
import { basename, dirname, join, resolve, sep } from "node:path";
import { errorCode, isMissing } from "./missing-file.js";

/** How many links in a row are followed before resolving stops (the kernel's ELOOP limit). */
export const MAX_LINK_HOPS = 40;

/** How resolving ends where it cannot go on. */
export interface RealPathOptions {
  /**
   * false (the default): an error other than a missing file (no permission, a link loop) is
   * thrown, and so is TooManyLinksError once MAX_LINK_HOPS links have been followed and another
   * one comes. true: resolving stops there, and the path resolved so far is the answer.
   */
  readonly bestEffort?: boolean;
}

/** Thrown (unless bestEffort) for a chain of more than MAX_LINK_HOPS links. */
export class TooManyLinksError extends Error {
  override readonly name = "TooManyLinksError";
}

/**
 * The real path of the absolute `path`, which may not exist: the part that exists resolved by
 * realpath, what is missing appended as written, and a link to something missing followed to
 * where it points (relative targets from the link's real folder, as the kernel does).
 */
export function realPathAllowingMissingSync(path: string, options: RealPathOptions = {}): string {
  const steps = resolveSteps(path, options.bestEffort ?? false, 0);
  let step = steps.next();
  while (!step.done) {
    const { call, path: asked } = step.value;
    let answer: Answer;
    try {
      answer = { value: call === "realpath" ? realpathSync(asked) : readlinkSync(asked) };
    } catch (error) {
      answer = { error };
    }
    step = steps.next(answer);
  }
  return step.value;
}

/** realPathAllowingMissingSync on node:fs/promises. */
export async function realPathAllowingMissing(path: string, options: RealPathOptions = {}): Promise<string> {
  const steps = resolveSteps(path, options.bestEffort ?? false, 0);
  let step = steps.next();
  while (!step.done) {
    const { call, path: asked } = step.value;
    const answer: Answer = await (call === "realpath" ? realpath(asked) : readlink(asked)).then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    step = steps.next(answer);
  }
  return step.value;
}

/** Whether the absolute, normalised `path` (a real path) is `root` or lies inside it. */
export function isWithin(path: string, root: string): boolean {
  if (path === root) return true;
  return path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** A file-system call the algorithm needs answered: realpath or readlink of `path`. */
interface Lookup {
  readonly call: "realpath" | "readlink";
  readonly path: string;
}

/** What the call returned, or what it threw. */
type Answer = { readonly value: string } | { readonly error: unknown };

/**
 * The algorithm, once for both variants: it yields each file-system call it needs and is handed
 * the answer back, so the sync and async functions above only differ in how they make the call.
 * `hops` counts the links followed to get here.
 */
function* resolveSteps(path: string, bestEffort: boolean, hops: number): Generator<Lookup, string, Answer> {
  const real = yield { call: "realpath", path };
  if ("value" in real) return real.value;
  // Missing, or a link to something missing: resolve the parent, then this last name.
  if (!bestEffort && !isMissing(real.error)) throw real.error;
  const parent = dirname(path);
  if (parent === path) return path;
  const here = join(yield* resolveSteps(parent, bestEffort, hops), basename(path));
  const link = yield { call: "readlink", path: here };
  if ("error" in link) {
    // EINVAL: here is no link, so it is simply missing.
    if (!bestEffort && !isMissing(link.error) && !isNotALink(link.error)) throw link.error;
    return here;
  }
  const target = resolve(dirname(here), link.value);
  if (hops >= MAX_LINK_HOPS) {
    if (bestEffort) return here;
    throw new TooManyLinksError(`too many symbolic links at ${target}`);
  }
  return yield* resolveSteps(target, bestEffort, hops + 1);
}

function isNotALink(error: unknown): boolean {
  return errorCode(error) === "EINVAL";
}
